import { readPage, type Page } from '../query/paging';
import type { PageQuery } from '../query/page-query';
import { activeListings, listingsSource, type ListingDto } from './listings';

type ListingRow = Omit<ListingDto, 'attributes'> & { health: number; skill: number; morale: number };

export async function listListings(request: PageQuery): Promise<Page<ListingDto>> {
  return readPage(listingsSource, request, toListingDto, activeListings);
}

function toListingDto(row: ListingRow): ListingDto {
  return {
    tokenId: row.tokenId,
    seller: row.seller,
    price: row.price,
    status: row.status,
    editionId: row.editionId,
    editionName: row.editionName,
    artUri: row.artUri,
    rarity: row.rarity,
    gender: row.gender,
    nftName: row.nftName,
    attributes: { health: row.health, skill: row.skill, morale: row.morale },
  };
}
