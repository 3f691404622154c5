/**
 * Reading the service's SQL migrations with the real PostgreSQL parser
 * (libpg-query): which statements of an up step lose data, whether each
 * carries the marker, and which schemas a statement names. The convention is
 * in docs/deploying.md, "Migrations that lose data".
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'libpg-query';

/** The comment that must precede a statement of an up step that loses data, followed by what it loses. */
export const lossMarker = '-- Loses data:';

export interface Migration {
  file: string;
  up: string;
  down: string;
}

/** node-pg-migrate's SQL migration sections. */
export function readMigration(dir: string, file: string): Migration {
  const text = readFileSync(join(dir, file), 'utf8');
  const [up = '', down = ''] = text.split(/^-- Down Migration\s*$/m);
  return { file, up: up.replace(/^-- Up Migration\s*$/m, ''), down };
}

export function readMigrations(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((file) => !file.startsWith('.'))
    .sort()
    .map((file) => {
      if (!file.endsWith('.sql')) throw new Error(`${file}: migrations are SQL files, which the checks read; write this one in SQL`);
      return readMigration(dir, file);
    });
}

type Node = Record<string, unknown>;
interface RawStatement {
  stmt: Node;
  stmt_location?: number;
  stmt_len?: number;
}

export interface Statement {
  /** The statement's own text. */
  text: string;
  /** The comments and blank lines between the statement before it and this one. */
  preamble: string;
  node: Node;
}

export async function statements(sql: string): Promise<Statement[]> {
  const { stmts = [] } = (await parse(sql)) as { stmts?: RawStatement[] };
  let previousEnd = 0;
  return stmts.map((raw) => {
    const start = raw.stmt_location ?? 0;
    const end = raw.stmt_len ? start + raw.stmt_len : sql.length;
    const statement = { text: sql.slice(start, end).trim(), preamble: sql.slice(previousEnd, start), node: raw.stmt };
    previousEnd = end + 1;
    return statement;
  });
}

const relationName = (relation: Node | undefined) => (relation ? [relation.schemaname, relation.relname].filter(Boolean).join('.') : '?');
const dotted = (parts: Node[]) => parts.map((part) => (part.String as Node | undefined)?.sval).join('.');
/** A parse tree's names: a list of List nodes (DROP's objects) is several names, a list of String nodes is one. */
function names(list: unknown): string[] {
  const items = (list as Node[] | undefined) ?? [];
  if (items.length && items.every((item) => 'String' in item)) return [dotted(items)];
  return items.flatMap((item) => {
    if ('List' in item) return [dotted(((item.List as Node).items as Node[]) ?? [])];
    if ('ObjectWithArgs' in item) return [dotted(((item.ObjectWithArgs as Node).objname as Node[]) ?? [])];
    if ('String' in item) return [dotted([item])];
    return [];
  });
}

/** Object kinds whose drop loses stored data (a sequence holds its position; a type or domain takes its columns). */
const dataHoldingKinds = new Set(['OBJECT_TABLE', 'OBJECT_SCHEMA', 'OBJECT_SEQUENCE', 'OBJECT_TYPE', 'OBJECT_DOMAIN', 'OBJECT_MATVIEW']);

/** What the statement loses, in words, or nothing. A DO block's body is not SQL to the parser, so any write or drop in it counts. */
export function losses(node: Node): string[] {
  const [[kind, body]] = Object.entries(node) as [[string, Node]];
  switch (kind) {
    case 'DropStmt':
      return dataHoldingKinds.has(String(body.removeType)) || body.behavior === 'DROP_CASCADE'
        ? [`drops ${names(body.objects).join(', ')}${body.behavior === 'DROP_CASCADE' ? ' and what depends on it' : ''}`]
        : [];
    case 'AlterTableStmt':
      return ((body.cmds as Node[] | undefined) ?? []).flatMap(({ AlterTableCmd: cmd }) => {
        const command = cmd as Node;
        if (command.subtype === 'AT_DropColumn') return [`drops the column ${String(command.name)} of ${relationName(body.relation as Node)}`];
        if (command.subtype === 'AT_AlterColumnType')
          return [`changes the type of ${relationName(body.relation as Node)}.${String(command.name)}, which can narrow it`];
        return [];
      });
    case 'TruncateStmt':
      return [`empties ${((body.relations as Node[]) ?? []).map((relation) => relationName(relation.RangeVar as Node)).join(', ')}`];
    case 'DeleteStmt':
      return [`deletes ${body.whereClause ? 'rows' : 'every row'} of ${relationName(body.relation as Node)}`];
    case 'UpdateStmt':
      return body.whereClause ? [] : [`rewrites every row of ${relationName(body.relation as Node)}`];
    case 'DoStmt': {
      const code = JSON.stringify(body.args);
      return /\b(drop|truncate|delete|update|alter)\b/i.test(code) ? ['runs a DO block that drops, alters or writes'] : [];
    }
    default:
      return [];
  }
}

export interface Loss {
  file: string;
  statement: string;
  loses: string;
  marked: boolean;
}

/** Every statement of the up step that loses data, and whether the marker precedes it. Down steps are rollbacks and may drop what their up step made. */
export async function upStepLosses(migration: Migration): Promise<Loss[]> {
  return (await statements(migration.up)).flatMap(({ text, preamble, node }) =>
    losses(node).map((loses) => ({ file: migration.file, statement: text.split('\n')[0]!, loses, marked: preamble.includes(lossMarker) })),
  );
}

/** Every schema a statement names as the schema of a relation, a sequence, a function or a dropped object. */
export function schemasNamed(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) schemasNamed(item, found);
  else if (typeof node === 'object' && node !== null) {
    const record = node as Node;
    if (typeof record.schemaname === 'string') found.add(record.schemaname);
    if (record.relname !== undefined && record.schemaname === undefined) found.add('(unqualified)');
    for (const key of ['objects', 'objname', 'funcname', 'defnames'])
      for (const name of names(record[key])) if (name.includes('.')) found.add(name.split('.')[0]!);
    for (const value of Object.values(record)) schemasNamed(value, found);
  }
  return found;
}
