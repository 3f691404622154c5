/**
 * The SST app: `npx sst deploy --stage <stage>` builds the
 * architecture on AWS, one piece per file in infra/ (docs/deploying.md).
 * SST allows no top-level imports here, so run() imports the pieces.
 */

/** Stages whose data survives `sst remove` and whose resources no deploy may delete. */
const protectedStages = ['prod', 'production'];

export default $config({
  app(input) {
    const kept = protectedStages.includes(input?.stage ?? '');
    return { name: 'hatchery', home: 'aws', providers: { aws: '7.20.0', random: '4.16.6' }, removal: kept ? 'retain' : 'remove', protect: kept };
  },
  async run() {
    const { checkWebhookAddresses, deploySettings } = await import('./infra/settings');
    const { createNetwork } = await import('./infra/network');
    const { createSecrets } = await import('./infra/secrets');
    const { createDatabase } = await import('./infra/database');
    const { createTable } = await import('./infra/table');
    const { functionContext } = await import('./infra/functions');
    const { createMigrations } = await import('./infra/migrations');
    const { createHttpApi } = await import('./infra/api');
    const { createHub } = await import('./infra/hub');
    const { createListener, listenerLogGroup } = await import('./infra/listener');
    const { createWebhooks } = await import('./infra/webhooks');
    const { createRouter } = await import('./infra/router');
    const { createFanOut } = await import('./infra/fan-out');
    const { createAlarms } = await import('./infra/alarms');
    const { metricsNamespace } = await import('./infra/functions');
    const { hubPath } = await import('./packages/functions/src/routes/realtime');

    const { protectStatefulResources } = await import('./infra/protection');
    if ($app.protect) protectStatefulResources();

    const settings = deploySettings();
    await checkWebhookAddresses(settings);
    const vpc = createNetwork(settings);
    const secrets = createSecrets();
    const database = createDatabase(vpc, settings);
    const table = createTable();
    const context = functionContext(vpc, database.url, table, secrets, settings);
    const { migrator } = createMigrations(context, database);
    const { api, functions: apiFunctions } = createHttpApi(context, settings);
    const { hub, functions: hubFunctions } = createHub(context, settings);
    const fanOut = createFanOut(context, hub);
    const listener = createListener(vpc, database.url, table, hub, fanOut, settings, createWebhooks(settings));
    const router = createRouter(api, hub, secrets, settings);
    createAlarms(
      {
        namespace: metricsNamespace(),
        functions: [...apiFunctions, ...hubFunctions, { name: 'Migrator', functionName: migrator.name }, { name: 'FanOut', functionName: fanOut.name }],
        proxyName: database.proxyName,
        // `sst dev` runs the listener on the developer's machine: no task, no log group.
        listenerLogGroup: $dev ? undefined : listenerLogGroup(listener),
      },
      settings,
    );

    return {
      /** The base URL of the HTTP API. */
      url: router.url,
      /** The realtime hub, for the SignalR client's withUrl() (it negotiates over https, then upgrades). */
      hubUrl: router.url.apply((url) => new URL(hubPath, url).href),
    };
  },
});
