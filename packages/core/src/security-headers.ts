/** Headers every response of the service carries, whoever answers it (a handler, or the gateway itself). */
export const securityHeaders = {
  // Browsers must not guess another content type than the one declared (a JSON body rendered as HTML, say).
  'x-content-type-options': 'nosniff',
} as const;
