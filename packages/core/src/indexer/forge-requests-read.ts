import { readPage, type Page } from '../query/paging';
import type { PageQuery } from '../query/page-query';
import { forgeRequestsSource, requestedBy, type ForgeRequestDto } from './forge-requests';

type ForgeRequestRow = Omit<ForgeRequestDto, 'tokenId' | 'editionId'> & { tokenId: string | null; editionId: string | null };

export async function listAccountForgeRequests(buyer: string, request: PageQuery): Promise<Page<ForgeRequestDto>> {
  return readPage(forgeRequestsSource, request, toForgeRequestDto, requestedBy(buyer));
}

function toForgeRequestDto(row: ForgeRequestRow): ForgeRequestDto {
  return {
    requestId: row.requestId,
    tier: row.tier,
    status: row.status,
    ...(row.tokenId !== null && { tokenId: row.tokenId }),
    ...(row.editionId !== null && { editionId: row.editionId }),
    blockNumber: row.blockNumber,
  };
}
