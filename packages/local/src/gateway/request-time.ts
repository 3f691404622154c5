const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const twoDigits = (value: number) => String(value).padStart(2, '0');
let timeSecond = Number.NaN;
let timeText = '';

/**
 * A request's time as API Gateway writes it in its events (`12/Mar/2020:19:03:58 +0000`: the HTTP API's
 * `requestContext.time`, the WebSocket API's `requestTime`), formatted once a second.
 */
export function requestTime(epochMs: number): string {
  const second = Math.floor(epochMs / 1000);
  if (second !== timeSecond) {
    const at = new Date(second * 1000);
    const clock = [at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds()].map(twoDigits).join(':');
    timeText = `${twoDigits(at.getUTCDate())}/${months[at.getUTCMonth()]}/${at.getUTCFullYear()}:${clock} +0000`;
    timeSecond = second;
  }
  return timeText;
}
