import { readPage, type Page } from '../query/paging';
import type { PageQuery } from '../query/page-query';
import { nftsSource, ownedNfts, type NftItemDto } from './nfts';

type NftRow = {
  tokenId: string;
  health: number;
  skill: number;
  morale: number;
  gender: number;
  editionId: string;
  editionName: string;
  artUri: string;
  rarity: number;
  nftName: string;
  staked: boolean;
};

export async function listAccountNfts(owner: string, request: PageQuery): Promise<Page<NftItemDto>> {
  return readPage(nftsSource, request, toNftItemDto, ownedNfts(owner));
}

function toNftItemDto(row: NftRow): NftItemDto {
  return {
    tokenId: row.tokenId,
    attributes: { health: row.health, skill: row.skill, morale: row.morale, gender: row.gender },
    editionId: row.editionId,
    editionName: row.editionName,
    artUri: row.artUri,
    rarity: row.rarity,
    nftName: row.nftName,
    staked: row.staked,
  };
}
