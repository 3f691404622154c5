import type { DeploySettings } from './settings';

/**
 * Two availability zones of private subnets for the functions, the database
 * and its proxy, with NAT: the functions fetch the identity provider's JWKS
 * and call DynamoDB over the internet.
 */
export function createNetwork(settings: DeploySettings): sst.aws.Vpc {
  return new sst.aws.Vpc('Vpc', { az: 2, nat: settings.nat });
}
