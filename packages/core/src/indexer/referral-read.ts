import { isMissingRelation, query } from '../db';
import { indexerAddress, indexerTable } from './names';
import type { ReferralInfoDto } from './referral';

type ReferralRow = { code: string | null; upline: string | null; referralCount: string; totalAccrued: string; totalClaimed: string };

// One round trip; each part is a primary-key or indexed lookup on the address, and the sums stay numeric in the database.
const referralSql = () => `SELECT
  (SELECT code::text FROM ${indexerTable('referral_registrations')} WHERE referrer = $1) AS code,
  (SELECT referrer FROM ${indexerTable('referral_links')} WHERE buyer = $1) AS upline,
  (SELECT count(*) FROM ${indexerTable('referral_links')} WHERE referrer = $1) AS "referralCount",
  (SELECT coalesce(sum(amount), 0)::text FROM ${indexerTable('referral_bnb_accruals')} WHERE referrer = $1) AS "totalAccrued",
  (SELECT coalesce(sum(amount), 0)::text FROM ${indexerTable('referral_bnb_claims')} WHERE referrer = $1) AS "totalClaimed"`;

const notIndexedYet: ReferralRow = { code: null, upline: null, referralCount: '0', totalAccrued: '0', totalClaimed: '0' };

/** The referral program as the indexer saw it for one address; zeros (and no code or upline) before the indexer has run. */
export async function getReferralInfo(address: string): Promise<ReferralInfoDto> {
  let row: ReferralRow;
  try {
    [row = notIndexedYet] = await query<ReferralRow>(referralSql(), [indexerAddress(address)]);
  } catch (error) {
    if (!isMissingRelation(error)) throw error;
    row = notIndexedYet;
  }
  return toReferralInfoDto(row);
}

function toReferralInfoDto(row: ReferralRow): ReferralInfoDto {
  return {
    ...(row.code !== null && { code: row.code }),
    ...(row.upline !== null && { upline: row.upline }),
    referralCount: Number(row.referralCount),
    pending: (BigInt(row.totalAccrued) - BigInt(row.totalClaimed)).toString(),
    totalAccrued: row.totalAccrued,
    totalClaimed: row.totalClaimed,
  };
}
