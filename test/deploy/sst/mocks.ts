/**
 * What AWS would answer for the resources and data sources the components
 * use, as Pulumi's mocks need it: a resource's outputs are its inputs plus the
 * attributes AWS computes (ids, ARNs, endpoints); a data source answers for a
 * fixed account in a fixed region.
 */
import { createHash } from 'node:crypto';

export const fakeRegion = 'eu-west-1';
export const fakeAccount = '123456789012';

const shortId = (name: string) => createHash('sha256').update(name).digest('hex').slice(0, 10);

/** arn:aws:<service>:<region>:<account>:<type>/<name>, from the resource's type token (aws:<module>/<type>:<Type>). */
function arnFor(type: string, name: string): string {
  const [, module = 'unknown', kind = 'resource'] = /^aws:([^/]+)\/([^:]+):/.exec(type) ?? [];
  return `arn:aws:${module}:${fakeRegion}:${fakeAccount}:${kind}/${name}`;
}

/** A policy document as AWS's JSON, from the data source's arguments. */
function policyJson(inputs: Record<string, unknown>): string {
  const statements = (inputs.statements ?? []) as Record<string, unknown>[];
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: statements.map((statement) => ({
      Effect: statement.effect ?? 'Allow',
      ...(statement.actions ? { Action: statement.actions } : {}),
      ...(statement.resources ? { Resource: statement.resources } : {}),
      ...(statement.principals ? { Principal: statement.principals } : {}),
      ...(statement.conditions ? { Condition: statement.conditions } : {}),
    })),
  });
}

export function mockResource(type: string, name: string, inputs: Record<string, unknown>): { id: string; state: Record<string, unknown> } {
  const id = `${name.toLowerCase().replace(/[^a-z0-9-]/g, '-')}-${shortId(`${type}/${name}`)}`;
  const state: Record<string, unknown> = { ...inputs, arn: arnFor(type, id) };
  if (inputs.name === undefined && type.startsWith('aws:')) state.name = id;
  switch (type) {
    case 'aws:apigatewayv2/api:Api': {
      const scheme = inputs.protocolType === 'WEBSOCKET' ? 'wss' : 'https';
      state.apiEndpoint = `${scheme}://${shortId(id)}.execute-api.${fakeRegion}.amazonaws.com`;
      state.executionArn = `arn:aws:execute-api:${fakeRegion}:${fakeAccount}:${shortId(id)}`;
      break;
    }
    case 'aws:apigatewayv2/stage:Stage':
      state.invokeUrl = `https://${shortId(String(inputs.apiId))}.execute-api.${fakeRegion}.amazonaws.com/${String(inputs.name)}`;
      state.executionArn = `arn:aws:execute-api:${fakeRegion}:${fakeAccount}:${String(inputs.apiId)}/${String(inputs.name)}`;
      break;
    case 'aws:lambda/function:Function':
      state.invokeArn = `arn:aws:apigateway:${fakeRegion}:lambda:path/2015-03-31/functions/${String(state.arn)}/invocations`;
      state.qualifiedArn = `${String(state.arn)}:$LATEST`;
      break;
    case 'aws:cloudfront/distribution:Distribution':
      state.domainName = `${shortId(id)}.cloudfront.net`;
      state.hostedZoneId = 'Z2FDTNDATAQYW2';
      break;
    case 'aws:rds/instance:Instance':
      state.address = `${id}.cluster.${fakeRegion}.rds.amazonaws.com`;
      state.endpoint = `${state.address as string}:5432`;
      state.port = inputs.port ?? 5432;
      break;
    case 'aws:rds/proxy:Proxy':
      state.endpoint = `${id}.proxy.${fakeRegion}.rds.amazonaws.com`;
      break;
    case 'aws:dynamodb/table:Table':
      state.streamArn = `${String(state.arn)}/stream/2026-01-01T00:00:00.000`;
      break;
    case 'docker-build:index:Image':
      state.digest = `sha256:${createHash('sha256').update(name).digest('hex')}`;
      state.ref = `${String((inputs.tags as string[] | undefined)?.[0] ?? name)}@${state.digest as string}`;
      break;
    case 'random:index/randomPassword:RandomPassword':
    case 'random:index/randomString:RandomString':
      // As long as asked, letters and digits (what `special: false` gives).
      state.result = createHash('sha512')
        .update(`secret:${name}`)
        .digest('base64')
        .replace(/[^A-Za-z0-9]/g, '')
        .padEnd(128, 'x')
        .slice(0, Number(inputs.length ?? 20));
      break;
    case 'random:index/randomBytes:RandomBytes': {
      const bytes = Buffer.alloc(Number(inputs.length ?? 32), shortId(name));
      state.base64 = bytes.toString('base64');
      state.hex = bytes.toString('hex');
      break;
    }
    case 'random:index/randomId:RandomId': {
      const bytes = createHash('sha256')
        .update(name)
        .digest()
        .subarray(0, Number(inputs.byteLength ?? 8));
      state.hex = bytes.toString('hex');
      state.b64Url = bytes.toString('base64url');
      state.dec = BigInt(`0x${state.hex as string}`).toString();
      break;
    }
  }
  return { id, state };
}

export function mockCall(token: string, inputs: Record<string, unknown>): Record<string, unknown> {
  switch (token) {
    case 'aws:index/getRegion:getRegion':
      // v7 of the AWS provider answers `region`; the deprecated `name` is left out so that code still reading it shows.
      return { id: fakeRegion, region: fakeRegion, description: 'Europe (Ireland)', endpoint: `ec2.${fakeRegion}.amazonaws.com` };
    case 'aws:index/getPartition:getPartition':
      return { id: 'aws', partition: 'aws', dnsSuffix: 'amazonaws.com', reverseDnsPrefix: 'com.amazonaws' };
    case 'aws:index/getCallerIdentity:getCallerIdentity':
      return { id: fakeAccount, accountId: fakeAccount, arn: `arn:aws:iam::${fakeAccount}:user/deployer`, userId: 'AIDEXAMPLE' };
    case 'aws:index/getAvailabilityZones:getAvailabilityZones':
      return { id: fakeRegion, names: ['a', 'b', 'c'].map((zone) => `${fakeRegion}${zone}`), zoneIds: ['euw1-az1', 'euw1-az2', 'euw1-az3'] };
    case 'aws:iam/getPolicyDocument:getPolicyDocument':
      return { ...inputs, id: 'policy', json: policyJson(inputs), minifiedJson: policyJson(inputs) };
    case 'aws:ec2/getAmi:getAmi':
      return { id: 'ami-0123456789abcdef0', imageId: 'ami-0123456789abcdef0', architecture: 'arm64' };
    default:
      return { id: token, ...inputs };
  }
}
