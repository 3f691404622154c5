import { readPage, type Page } from '../query/paging';
import type { PageQuery } from '../query/page-query';
import { editionsSource, type EditionDto } from './editions';

export async function listEditions(request: PageQuery): Promise<Page<EditionDto>> {
  return readPage(editionsSource, request, toEditionDto);
}

function toEditionDto(row: EditionDto): EditionDto {
  return {
    id: row.id,
    name: row.name,
    artUri: row.artUri,
    health: row.health,
    skill: row.skill,
    morale: row.morale,
    rarity: row.rarity,
    maxSupply: row.maxSupply,
    minted: row.minted,
    mintStart: row.mintStart,
    mintEnd: row.mintEnd,
    price: row.price,
    distribution: row.distribution,
    active: row.active,
  };
}
