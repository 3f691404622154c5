/**
 * The resources whose loss a user would notice, by Pulumi type, with what a
 * replacement or deletion would lose. One list for two uses: protected stages
 * protect and retain each of them (infra/protection.ts), and the upgrade check
 * (test/deploy/stateful-record.json, docs/deploying.md "Upgrading") records
 * each of them in every deploy variant. Free of SST's globals, so the
 * tests import it.
 *
 * The Router's KeyValueStore is not here: it holds the routes, which every
 * deploy writes again.
 */
export const statefulResources: Readonly<Record<string, string>> = {
  'aws:rds/instance:Instance': 'the database: accounts, linked wallets, open challenges and whatever the indexer writes there',
  'aws:rds/parameterGroup:ParameterGroup': 'the database’s server settings (logical replication, TLS)',
  'aws:rds/subnetGroup:SubnetGroup': 'the database’s placement: the instance moves with it',
  'aws:rds/proxy:Proxy': 'the database endpoint every function and the listener connect to',
  'aws:rds/proxyDefaultTargetGroup:ProxyDefaultTargetGroup': 'the proxy’s connection pool settings',
  'aws:rds/proxyTarget:ProxyTarget': 'the proxy’s link to the instance',
  'aws:secretsmanager/secret:Secret': 'the database credentials RDS Proxy signs in with',
  'aws:secretsmanager/secretVersion:SecretVersion': 'the database credentials RDS Proxy signs in with',
  'random:index/randomPassword:RandomPassword':
    'a generated secret (the database password, the origin-verification secret): a new one locks out what holds the old',
  'random:index/randomId:RandomId': 'the final snapshot’s name, which a restore looks it up by',
  'aws:dynamodb/table:Table': 'the hub’s connections and groups and the rate-limit counters',
  'aws:cloudwatch/logGroup:LogGroup': 'the logs kept for the group’s retention',
  'aws:ec2/eip:Eip': 'a NAT address that an existing database’s allow-list names',
  'aws:cloudfront/distribution:Distribution': 'the base URL (url, hubUrl) every client is configured with',
  'aws:sns/topicSubscription:TopicSubscription': 'the on-call address’s confirmed alarm subscription',
};
