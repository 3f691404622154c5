/** What the accounts take: the wallet challenge's lifetime and nonce, the ID token's clock skew, a nickname and an email. */
export const accountLimits = {
  challengeLifetimeMs: 5 * 60_000,
  nonceBytes: 16,
  nickname: { min: 3, max: 20 },
  /** Clock skew allowed when checking that an ID token's `iat` and `auth_time` are in the past. */
  tokenClockSkewSeconds: 60,
} as const;

const nicknameCharacters = 'A-Za-z0-9 _';

export const accountPatterns = {
  signature: /^0x[0-9a-fA-F]{130}$/,
  nickname: new RegExp(`^[${nicknameCharacters}]{${accountLimits.nickname.min},${accountLimits.nickname.max}}$`),
  /** Global: for `replace` only (a global regex's `test` is stateful). */
  nicknameForbiddenCharacter: new RegExp(`[^${nicknameCharacters}]`, 'g'),
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
} as const;
