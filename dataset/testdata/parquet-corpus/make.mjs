// make.mjs writes the Parquet corpus of ihope's reader tests: one small
// log (log.csv, made here from a fixed seed) written by DuckDB in the
// forms people get from it, each read by dataset's TestParquetCorpus and
// compared with the CSV form.
//
// Run it outside the repository's module (npm installs into the current
// directory):
//
//	mkdir /tmp/duck && cd /tmp/duck
//	npm install @duckdb/node-api@1.5.6-r.1 parquet-wasm@0.8.0 apache-arrow
//	node /path/to/dataset/testdata/parquet-corpus/make.mjs /path/to/dataset/testdata/parquet-corpus
//
// Tested with DuckDB 1.5.6 (@duckdb/node-api 1.5.6-r.1), parquet-wasm
// 0.8.0 (arrow-rs), apache-arrow 21, Node 20.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// @duckdb/node-api is resolved from the current directory, where npm
// installed it, not from this file's.
const require = createRequire(join(process.cwd(), 'make.cjs'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { DuckDBInstance } = await load('@duckdb/node-api');
// parquet-wasm is arrow-rs's writer (the Rust Arrow implementation's).
const pw = await load('parquet-wasm');
const arrow = await load('apache-arrow');

const dir = resolve(process.argv[2] ?? '.');

// The log: 149 episodes of 3 to 14 steps (1,271 rows in all, not a
// multiple of 8 or 256, so that writers pad their last run of levels
// and indices), 20 states, 4 actions; next_state is given on the last
// row of an episode that did not end in a terminal state and is empty
// elsewhere (nulls in an optional column); terminal is 1 on the last row
// of every third episode.
let seed = 20261128n;
function rand() { // a 64-bit LCG (Knuth's MMIX), top 31 bits
  seed = (seed * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
  return Number(seed >> 33n) / 2 ** 31;
}
const lines = ['episode,t,state,action,reward,behavior_prob,target_prob,next_state,terminal'];
const cols = { episode: [], t: [], state: [], action: [], reward: [], behavior_prob: [], target_prob: [], next_state: [], terminal: [] };
let rows = 0;
for (let e = 0; e < 149; e++) {
  const len = 3 + Math.floor(rand() * 12);
  let s = Math.floor(rand() * 20);
  const terminal = e % 3 === 0;
  for (let t = 0; t < len; t++) {
    const a = Math.floor(rand() * 4);
    const b = [0.1, 0.2, 0.3, 0.4][a];
    const p = [0.25, 0.25, 0.25, 0.25][a];
    const r = Math.round(rand() * 1000) / 100 - 5;
    const next = (s + a + 1) % 20;
    const last = t === len - 1;
    const ns = last && !terminal ? String(next) : '';
    const term = last && terminal ? 1 : 0;
    lines.push(`ep${String(e).padStart(3, '0')},${t},${s},${a},${r},${b},${p},${ns},${term}`);
    for (const [k, v] of Object.entries({
      episode: `ep${String(e).padStart(3, '0')}`, t, state: s, action: a, reward: r, behavior_prob: b,
      target_prob: p, next_state: ns === '' ? null : next, terminal: term === 1,
    })) cols[k].push(v);
    s = next;
    rows++;
  }
}
if (rows !== 1271) throw new Error(`the log has ${rows} rows, want 1271`);
writeFileSync(join(dir, 'log.csv'), lines.join('\n') + '\n');

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
// Typed as a DuckDB user would: terminal BOOLEAN, ids INTEGER.
await c.run(`CREATE TABLE log AS SELECT episode, t::INTEGER AS t, state::INTEGER AS state,
  action::INTEGER AS action, reward::DOUBLE AS reward, behavior_prob::DOUBLE AS behavior_prob,
  target_prob::DOUBLE AS target_prob, next_state::INTEGER AS next_state, terminal::BOOLEAN AS terminal
  FROM read_csv('${join(dir, 'log.csv')}', header = true, all_varchar = true)`);

const files = [];
async function copy(name, query, options) {
  const path = join(dir, name + '.parquet');
  await c.run(`COPY (${query}) TO '${path}' (FORMAT parquet${options ? ', ' + options : ''})`);
  files.push(name);
}
// DuckDB's defaults (snappy, dictionaries where they pay).
await copy('duckdb-default', 'SELECT * FROM log ORDER BY episode, t');
// Every codec DuckDB offers (its lz4 is LZ4_RAW in the file), with the
// format's v1 and v2 encodings (DuckDB 1.5 writes v1 data pages either
// way; v2 brings BYTE_STREAM_SPLIT and DELTA encodings). Snappy v1 is the
// default, written above.
for (const codec of ['uncompressed', 'snappy', 'gzip', 'zstd', 'brotli', 'lz4']) {
  for (const v of ['v1', 'v2']) {
    if (codec === 'snappy' && v === 'v1') continue;
    await copy(`duckdb-${codec}-${v}`, 'SELECT * FROM log ORDER BY episode, t',
      `COMPRESSION ${codec}, PARQUET_VERSION ${v}`);
  }
}
// The types DuckDB gives a CSV by itself: ids and terminal as BIGINT.
await copy('duckdb-csv-types', `SELECT * FROM read_csv('${join(dir, 'log.csv')}') ORDER BY episode, t`);

// arrow-rs through parquet-wasm: its defaults (uncompressed, dictionaries,
// v1 pages, terminal BOOLEAN and next_state a nullable INT32), and v2 data
// pages (which DuckDB does not write) with three codecs: terminal an INT32
// with zstd and lz4, BOOLEAN with snappy (RLE-encoded in v2 pages, which
// parquet-go misreads: refused).
function arrowTable(terminal) {
  return arrow.makeTable({
    episode: arrow.vectorFromArray(cols.episode, new arrow.Utf8()),
    t: arrow.vectorFromArray(cols.t, new arrow.Int32()),
    state: arrow.vectorFromArray(cols.state, new arrow.Int32()),
    action: arrow.vectorFromArray(cols.action, new arrow.Int32()),
    reward: arrow.vectorFromArray(cols.reward, new arrow.Float64()),
    behavior_prob: arrow.vectorFromArray(cols.behavior_prob, new arrow.Float64()),
    target_prob: arrow.vectorFromArray(cols.target_prob, new arrow.Float64()),
    next_state: arrow.vectorFromArray(cols.next_state, new arrow.Int32()),
    terminal,
  });
}
const bools = arrow.tableToIPC(arrowTable(arrow.vectorFromArray(cols.terminal, new arrow.Bool())), 'stream');
const ints = arrow.tableToIPC(arrowTable(arrow.vectorFromArray(cols.terminal.map(Number), new arrow.Int32())), 'stream');
function arrowRS(name, ipc, props) {
  writeFileSync(join(dir, name + '.parquet'), pw.writeParquet(pw.Table.fromIPCStream(ipc), props));
  files.push(name);
}
const v2 = (c) => new pw.WriterPropertiesBuilder().setCompression(c).setWriterVersion(pw.WriterVersion.V2).build();
arrowRS('arrow-rs-default', bools, null);
arrowRS('arrow-rs-snappy-v2-bool', bools, v2(pw.Compression.SNAPPY));
arrowRS('arrow-rs-zstd-v2', ints, v2(pw.Compression.ZSTD));
arrowRS('arrow-rs-lz4-v2', ints, v2(pw.Compression.LZ4_RAW));
console.log(files.join('\n'));
