/** Where the deploy copies the SQL migrations, relative to the migration function's bundle (its task root). */
export const migrationsBundleDir = 'migrations';
