import { describe } from 'vitest';
import { besidePonderSuite } from './beside-ponder.suite';

/** Hatchery beside the real Ponder in its direct layout (`--schema indexer`); one chain and one Ponder for the file. */
describe('Hatchery beside a real Ponder, direct layout', () => besidePonderSuite('direct'));
