import { describe, expect, it } from 'vitest';
import { configSchema } from '@hatchery/platform/config';
import { accountsSchema } from '@hatchery/platform/config/accounts';
import { awsSchema } from '@hatchery/platform/config/aws';
import { databaseSchema } from '@hatchery/platform/config/database';
import { edgeSchema } from '@hatchery/platform/config/edge';
import { parseSettings, readSettings } from '@hatchery/platform/config/environment';
import { eventsSchema } from '@hatchery/platform/config/events';
import { fanOutSchema } from '@hatchery/platform/config/fan-out';
import { identitySchema } from '@hatchery/platform/config/identity';
import { requestsSchema } from '@hatchery/platform/config/requests';
import { telemetrySchema } from '@hatchery/platform/config/telemetry';

const groups = { databaseSchema, awsSchema, identitySchema, telemetrySchema, requestsSchema, edgeSchema, accountsSchema, fanOutSchema, eventsSchema };

describe('the settings, by group', () => {
  it('put each variable in exactly one group, and the whole configuration is every group', () => {
    const names = Object.values(groups).flatMap((schema) => Object.keys(schema.shape));
    expect(names.length).toBe(new Set(names).size);
    expect(names.sort()).toEqual(Object.keys(configSchema.shape).sort());
  });

  it("validate only their own variables: a wrong one in another group fails that group's readers, not this one's", () => {
    const env = { FANOUT_POSTS_PER_SECOND: 'lots', DATABASE_URL: 'postgres://db.example.test/hatchery', CORS_ORIGINS: 'https://a.example , https://b.example' };
    expect(parseSettings(requestsSchema, env)).toEqual({
      CORS_ORIGINS: ['https://a.example', 'https://b.example'],
      CORS_ALLOWED_HOST_SUFFIXES: [],
    });
    expect(() => parseSettings(fanOutSchema, env)).toThrow('Invalid configuration: FANOUT_POSTS_PER_SECOND: Invalid input: expected number, received NaN');
    expect(() => readSettings(configSchema, env, {})).toThrow(/^Invalid configuration: FANOUT_POSTS_PER_SECOND/);
  });

  it("take a linked variable from SST's links when the environment leaves it unset, and the environment's value when it is set", () => {
    const links = { DatabaseUrl: { value: 'postgres://linked.example.test/hatchery' }, Table: { name: 'stage-table' } };
    expect(readSettings(configSchema, {}, links)).toMatchObject({ DATABASE_URL: 'postgres://linked.example.test/hatchery', DYNAMODB_TABLE: 'stage-table' });
    expect(readSettings(configSchema, { DYNAMODB_TABLE: 'mine' }, links).DYNAMODB_TABLE).toBe('mine');
  });
});
