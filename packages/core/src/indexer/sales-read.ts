import { readPage, type Page } from '../query/paging';
import type { PageQuery } from '../query/page-query';
import { salesSource, type SaleDto } from './sales';

export async function listSales(request: PageQuery): Promise<Page<SaleDto>> {
  return readPage(salesSource, request, toSaleDto);
}

function toSaleDto(row: SaleDto): SaleDto {
  return {
    tokenId: row.tokenId,
    seller: row.seller,
    buyer: row.buyer,
    price: row.price,
    platformFee: row.platformFee,
    royalty: row.royalty,
    blockNumber: row.blockNumber,
  };
}
