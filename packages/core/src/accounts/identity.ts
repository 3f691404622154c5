/** The caller as the identity provider's token describes them (SPEC.md "Authentication"). */
export interface Identity {
  userId: string;
  email?: string;
  name?: string;
}
