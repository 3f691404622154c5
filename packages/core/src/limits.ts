/** Every numeric limit of SPEC.md "Limits", in one place. */
export const limits = {
  page: { min: 1, max: 200, default: 1 },
  pageSize: { min: 1, max: 100, default: 20 },
  filterLength: 500,
  orderByLength: 200,
  challengeLifetimeMs: 5 * 60_000,
  nonceBytes: 16,
  nickname: { min: 3, max: 20 },
  summaryCacheMs: 30_000,
  listenerPollMs: 5_000,
  listenerReconnectMs: 5_000,
  transientRetries: 3,
  transientMaxDelayMs: 5_000,
  walletPostsPerMinute: 5,
} as const;

const nicknameCharacters = 'A-Za-z0-9 _';

export const patterns = {
  address: /^0x[0-9a-fA-F]{40}$/,
  signature: /^0x[0-9a-fA-F]{130}$/,
  nickname: new RegExp(`^[${nicknameCharacters}]{${limits.nickname.min},${limits.nickname.max}}$`),
  /** Global: for `replace` only (a global regex's `test` is stateful). */
  nicknameForbiddenCharacter: new RegExp(`[^${nicknameCharacters}]`, 'g'),
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
} as const;
