import { describe } from 'vitest';
import { besidePonderSuite } from './beside-ponder.suite';

/** Hatchery beside the real Ponder in its views layout (`--schema <deployment> --views-schema indexer`); one chain and one Ponder for the file. */
describe('Hatchery beside a real Ponder, views layout', () => besidePonderSuite('views'));
