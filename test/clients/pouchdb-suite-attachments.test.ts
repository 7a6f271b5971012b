/**
 * PouchDB's own integration suite, `tests/integration/test.attachments.js` (pouchdb/pouchdb),
 * ported to run against Settee through PouchDB 9's HTTP adapter: every test of the per-adapter
 * suite in its `http` variant, and every replication test for the pairs involving `http`
 * (`local:http`, `http:http`, `http:local`; `local` is a leveldb PouchDB in a temporary
 * directory). Test names are PouchDB's, prefixed with the variant, so each can be traced.
 *
 * Left out or changed:
 * - 'test stored URL content type of png data': browser only (Blob object URLs).
 * - 'putAttachment and getAttachment with big png data' reads PouchDB's 678 010-byte
 *   `deps/bigimage.js`; here the same number of deterministic pseudo-random bytes stand in for
 *   it (typed image/png, so the digest is the MD5 of the content, as for the real PNG).
 * - '#3961 Many attachments on same doc' is `it.skip` upstream only for browser CI flakiness;
 *   it is ported and runs.
 * - The `local:local` replication variants concern no server.
 * In Node, PouchDB's "blobs" are Buffers (with a non-standard `type`); PouchDB's testUtils
 * helpers (btoa, atob, makeBlob, readBlob, base64Blob) become Buffer conversions here.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { type LoggingProxy } from './proxy.js';
import { PouchFixture, failure } from './pouch-fixture.js';

let fx: PouchFixture;
let proxy: LoggingProxy;

before(async () => {
  fx = await PouchFixture.start('settee-pouch-suite-att-');
  ({ proxy } = fx);
});
after(async () => fx.close());

// ---------------------------------------------------------------------------------------------
// Helpers (PouchDB's testUtils, in Node).

/** Base64 of a binary string (testUtils.btoa). */
const btoa = (bin: string) => Buffer.from(bin, 'binary').toString('base64');
/** Binary string of base64 (testUtils.atob). */
const atob = (b64: string) => Buffer.from(b64, 'base64').toString('binary');
/** testUtils.makeBlob in Node. */
const makeBlob = (data: string) => Buffer.from(data, 'binary');
/** testUtils.binaryStringToBlob in Node: a Buffer carrying a `type`. */
const binBlob = (bin: string, type: string) => Object.assign(Buffer.from(bin, 'binary'), { type });
/** testUtils.readBlob in Node. */
const readBlob = (blob: Buffer) => blob.toString('binary');
const md5 = (b: Buffer) => `md5-${createHash('md5').update(b).digest('base64')}`;
const clone = <T>(v: T): T => structuredClone(v);

let dbCounter = 0;
/** A distinct, valid database name per test. */
function dbName(label: string): string {
  const slug = label.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48);
  return `att-${++dbCounter}-${slug}`;
}

/** A fresh Settee database through the HTTP adapter (PouchDB's `new PouchDB(dbs.name)`, http). */
function remote(label: string): Promise<any> {
  return fx.remote(dbName(label));
}

/** The exchanges with one database, for assertion messages. */
function wire(db: any): string {
  return proxy.show(`/${db.name.split('/').pop()}`);
}

/**
 * A live changes feed that collects `count` changes, then cancels itself; resolves with the
 * changes and the 'complete' event's value.
 */
function liveChanges(db: any, opts: object, count: number, ms = 20000): Promise<{ changes: any[]; complete: any }> {
  return new Promise((resolve, reject) => {
    const changes: any[] = [];
    const feed = db.changes({ ...opts, live: true });
    const timer = setTimeout(() => {
      feed.cancel();
      reject(new Error(`live changes: ${changes.length} of ${count} changes after ${ms} ms\n${wire(db)}`));
    }, ms);
    feed.on('change', (c: any) => {
      changes.push(c);
      if (changes.length === count) feed.cancel();
    });
    feed.on('error', (err: unknown) => {
      clearTimeout(timer);
      reject(err);
    });
    feed.on('complete', (complete: any) => {
      clearTimeout(timer);
      resolve({ changes, complete });
    });
  });
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);

// ---------------------------------------------------------------------------------------------
// PouchDB's fixtures.

const icons = [
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAABmJLR0QA/wD/AP+gvaeTAAAACXBIWXMAAABIAAAASABGyWs+AAAACXZwQWcAAAAQAAAAEABcxq3DAAAC8klEQVQ4y6WTS2hcZQCFv//eO++ZpDMZZjKdZB7kNSUpeWjANikoWiMUtEigBdOFipS6Ercu3bpTKF23uGkWBUGsoBg1KRHapjU0U81rpp3ESdNMZu6dx70zc38XdSFYVz1wNmdxzuKcAy8I8RxNDfs705ne5FmX0+mXUtK0mka2kLvxRC9vAe3nGmRiCQ6reux4auDi6ZenL0wOjaa6uoKK2+kgv1O0l1dvby/8/tvVe1t/XAn6ArvZ3fyzNIBjsQS5YiH6/ul3v/z0/AcfTx8fC24+zgvV4SXccYTtYlGM9MSDMydee1W27OQPd5d+Hujure4bZRQVeLCTY2p44tJ7M2/Pjg1lOLQkXy2scP3OQ1b3Snzx3SK/PCoxOphh7q13ZqeGJy492MmhAkoyHMUlRN8b4yfnBnqSWLqJItzkXZPoWhzF4WZdjGJ6+7H0OoPxFG9OnppzCtGXCEdRZ16axu1yffjRmfPnYqEw7WIdj1OlO6wx1e0g7hckO1ReH4wSrkgUVcEfDITub6w9Gus7tqS4NAcOVfMpCFq2jdrjwxv2cG48SejPFe59/gmnyuuMHA0ien0oR1x0BgJ4XG5fwO9Hk802sm3TbFiYVhNNU1FUBYCBsRNEmiad469gYyNUgRDPipNIQKKVajo1s1F9WjqgVjZQELg9Ek3TUFNHCaXnEEiQEvkPDw4PqTfMalk3UKt1g81ioRgLRc6MxPtDbdtGKgIhBdgSKW2kLWm327SaLayGxfzCzY2vf/zms0pVLyn7lQOadbmxuHb7WrawhW220J+WKZXK6EaNsl7F0GsYep1q3eTW6grfLv90zZRyI7dfRDNtSPdE+av05PL8re+HgdlMPI2wJXrDRAACgdVusfZ4k+uLN+eXs/cvp7oitP895UQogt6oxYZiiYsnMxMXpjPjqaC/QwEoGRX71+yd7aXs3asPd/NXAm7vbv5g7//P1OHxpvsj8bMep8sPULdMY32vcKNSr/3nTC+MvwEdhUhhkKTyPgAAAEJ0RVh0Y29tbWVudABGaWxlIHNvdXJjZTogaHR0cDovL3d3dy5zc2J3aWtpLmNvbS9GaWxlOktpcmJ5SGVhZFNTQkIucG5nSbA1rwAAACV0RVh0Y3JlYXRlLWRhdGUAMjAxMC0xMi0xNFQxNjozNDoxMCswMDowMDpPBjcAAAAldEVYdG1vZGlmeS1kYXRlADIwMTAtMTAtMDdUMjA6NTA6MzYrMDA6MDCjC6s7AAAAAElFTkSuQmCC',
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAC3ElEQVQ4jX2SX2xTdRzFP/d3f5d7u7ZbGes6LyAFWSiNmbMuSqb4wgxGVMiYT/BkNPMNfV1MDAFfNDHxwWSJU4wsMsKLEhI3gmE0JHO6FTBzMrZlS3V3Qun+sG70tvePD4ZlI8BJvi/fc/LN9+QceAIanm1oa2xo7HuSRn0c0dUq5fbd2teerLRHxqzuhzjDEs+0VYSrT4vHHbAW1ZrWg9aeYweurdv3vCsTL7Yy+GmHfcb3/Qn5T49MCYMW85Dz2Vphdl6jWPLJjmAOfSN/QsFY+ZdfNic5tuUFzLEfZjOLi1Xt5C7J44VJ6V/9Up546M0NFz/Xhp070l8789elf65DH3wvFYoACK2KNiMMz79Nx9ojEZOWP/Lx1NCv/7v8fTDK0fe34QF/ZsS5rkxhAUC4ZZJeGfQgovFNPu4+KtsAYsWad+rjM1TqHvcsqNmUY59pow/HqI07b62msEtqwijzku4inXmorqXllWpxybgb3f/akVLi7lAJ60KA+gMOTTcSWKc1rgZyi1f+8joB1PPDbn85W/GzYxOL1XgJaRDoTW9ID8ysnKyK24dSh/3auoSGUuGQFxb2UzlERL19Nu12AkiArkwhA6HDT29yLi+j1s3Oih/royUZjXihYg5W7txH5EGrhI17wMy6yWRUT47m7NHVHmypcirnl8SO6pBnNiWdr4q6+kZksxI3oiDCsLwE9/LARlguIm/lXbmuif3TTjG4Ejj724RbDuleezimbHv1dW/rrTQE62ByRLC8AJ4C2SkIIiauTbsD65rYlSlYp9LlTy5muBkx/WYZgMQ++HtcsGunR33S5+Y4NKcgHFQAeGSV09PsnZtRuu05uD8LZsDDXgDXhubd0DfAaM9l7/t1FtbC871Sbk5MbdX5oHwbOs+ovVPj9C7N0VhyUfv61Q/7x0qDqyk8CnURZcdkzufbC0p7bVn77otModRkGqdefs79qOj7xgPdf3d0KpBuuY7dAAAAAElFTkSuQmCC',
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAABHNCSVQICAgIfAhkiAAAAAlwSFlzAAALEgAACxIB0t1+/AAAABZ0RVh0Q3JlYXRpb24gVGltZQAwMS8wNy8wOCumXF8AAAAfdEVYdFNvZnR3YXJlAE1hY3JvbWVkaWEgRmlyZXdvcmtzIDi1aNJ4AAADHElEQVQ4EYXBe0wUBADH8R/CcSccQnfcIcbrXgRixKPSMIxklU4tJOUfyflIcmVJzamTVjJrJIRa6OZ4DmGMwSoEfKIVkcTC5qNRmqxpuki3VFiIjMc33fijka3PR/o3s7/R+Hl8QTgpxz2kHHWTuC8Cf7PxlCSr/ke0Ndrc5ioPJejONHxHjfiOGAkYNuNqDMX2WEC3pCf0H2LMScbLMcciiB0KJGbcwMy7RmYOG4kdMxA7EkBsRySB6X43JM3TJD6aoT3OvOlsPxVNX+807oyJ/rtiYFgMI271mdjdEcMjhQ8jl1eNpEDdV/PugrajpZu/ejndwafvpdB/1sHtS+EM/m4BBGNTuNCawPk2B6M3jNRXRvJSmpOG4je7Gj5Yekw7spLPXe8s42xdMfXvuzh3OIHerihADP1poeuQP0f2vMbX5fmcbnHS3eDg+6oCbp+ppWjV3Iu6Lzf10fzGotnUFVmp2pBGX3sS54+7KXsribq8V/nrl2aun66gfOOLnKx0cqLqKTalP14iyaQJ7uwsH/p7oli/OJV31q7i7bREmovfYPBSE83FG1m37BVWL17I1W8cbMn1RdIz+ofpCdHBtcvnhIxXf5zLjjLI23qQ4StNjF5rpSi/ltyd0FK9k8xk23hqQuhBSW49QGlOZjwdpZ8w2NsDV9vh8klGfvuJzuoytq6cjTTlM0l+msT0kMu6u/Bw3uBHza+zaJmFwsol7G3MoaRxHbtqMslcYWNb1Qr2dxYMRSSFV0iyaoItLjrizIUf6znRuZ/EjCie3+5iXomTZw+EMb82jNQSB8996CYxI5za5gKuXDvE00/O6pXk0T3BnoiQ75r2bSNnw3JU5sWc9iCy17j441cTQzcN5Kx3kdpqxesLsXTtCxwpzyc5ztEjyaUJBkmrJR0wxHtjrQjC+XMIK2/5kjPgg/uiHXuDBUOKN5JaJK2RFKhJkrItQTe7Z8SRNTUMc6QBebx+kMfrW98obxaZQ+mwz2KTLXhA0hI9gGuuv3/TZruNDL9grDKVS5qqe8wyFC00Wdlit7MgIOBLSYma8DfYI5E1lrjnEQAAAABJRU5ErkJggg==',
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAB1klEQVR42n2TzytEURTHv3e8N1joRhZGzJsoCjsLhcw0jClKWbHwY2GnLGUlIfIP2IjyY2djZTHSMJNQSilFNkz24z0/Ms2MrnvfvMu8mcfZvPvuPfdzz/mecwgKLNYKb0cFEgXbRvwV2s2HuWazCbzKA5LvNecDXayBjv9NL7tEpSNgbYzQ5kZmAlSXgsGGXmS+MjhKxDHgC+quyaPKQtoPYMQPOh5U9H6tBxF+Icy/aolqAqLP5wjWd5r/Ip3YXVILrF4ZRYAxDhCOJ/yCwiMI+/xgjOEzmzIhAio04GeGayIXjQ0wGoAuQ5cmIjh8jNo0GF78QwNhpyvV1O9tdxSSR6PLl51FnIK3uQ4JJQME4sCxCIRxQbMwPNSjqaobsfskm9l4Ky6jvCzWEnDKU1ayQPe5BbN64vYJ2vwO7CIeLIi3ciYAoby0M4oNYBrXgdgAbC/MhGCRhyhCZwrcEz1Ib3KKO7f+2I4iFvoVmIxHigGiZHhPIb0bL1bQApFS9U/AC0ulSXrrhMotka/lQy0Ic08FDeIiAmDvA2HX01W05TopS2j2/H4T6FBVbj4YgV5+AecyLk+CtvmsQWK8WZZ+Hdf7QGu7fobMuZHyq1DoJLvUqQrfM966EU/qYGwAAAAASUVORK5CYII=',
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAEG0lEQVQ4EQEQBO/7AQAAAAAAAAAAAAAAAAAAAACmm0ohDxD8bwT//ksOBPAhAAAAAPL8EN8IDQLB5eQEhVpltt8AAAAAAAAAAAAAAAABAAAAAAAAAACHf0UGKSgBgygY7m/w4O8F5t71ABMaCQAPEAQAAAAAAPwEBgAMFAn74/ISnunoA3RcZ7f2AAAAAAEAAAAAh39FBjo4AZYTAOtf1sLmAvb1+gAAAAAALzsVACEn+wAAAAAA/f4G/+LcAgH9AQIA+hAZpuDfBmhaZrb1AwAAAABtaCSGHAjraf///wD47/kB9vX7AAAAAAAYHgsAERT+AAAAAAACAf0BERT/AAQHB/746/IuBRIMFfL3G8ECpppKHigY7m/68vcCHRv0AgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA//0ADgvzAgP//gAWBe1hUEgMOgIKDfxr9Oz3BRsiAf8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAHCP///zu8gMjIftYAgkD/1ID//4ABwb6Af//AgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAFBPwBAAAAAAP0710CDgTvIQD//QAAAP8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAD//QD8BAYADQv//gQAAAAAAAAAAAAAAgABAf4AAAAAAAAAAAAAAAAAAAAAAAABAgAAAAAAAAAAAAAAAAAAAAAAAAAAAAP//gAAAAAABPL7D+D57Owh0MQAAAAAAAD08/sAAAAAAAAAAADj2fQA8ewGAAAAAAAAAAAAAAAAAAAAAAAAAAAA+/r1AAwECwIEAggDugsNBGcAAAAAAwMBAO7o+AAAAAAAAAAAAAgKBAAOEAUAAAAAAAAAAAAAAAAAAAAAAAAAAADz8vwA/QwRowTr6gSLHSQQYvfr9QUhJ/sA6OEEAPPy+QAAAAAAFR0IACEn+wAAAAAAAAAAAAAAAAAAAAAA4+YP/g0OAgDT3wWoAlpltt/d7BKYBAwH/uTmDf4AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAPL1Df798fUC+AgSqMfL9sICAAAAAOblAHXzBRSo////APTz+wD//wAAAAAAAAAAAAAAAAAAAAEBAP3+Bv/j5g/+7uL3AukDH97g3wZomJzA9wMAAAAAs7jd/kE8J7n9BwoSJSgGMQYD/wL++/8ABAUCAPb1BQDw7AIA8e8DAQAFBf/0DBqj6OgGTlpmtvUAAAAAAQAAAAAAAAAAAAAAAFFRPg1SSAwbGxv8cQn67mMHBf7/AwL/APb5AwH/DRCn294GpMLH9sKdoMD3AAAAAAAAAABEawlCEphz4AAAAABJRU5ErkJggg==',
];
const iconDigests = [
  'md5-Mf8m9ehZnCXC717bPkqkCA==',
  'md5-fdEZBYtnvr+nozYVDzzxpA==',
  'md5-ImDARszfC+GA3Cv9TVW4HA==',
  'md5-hBsgoz3ujHM4ioa72btwow==',
  'md5-jDUyV6ySnTVANn2qq3332g==',
];
const iconLengths = [1047, 789, 967, 527, 1108];

const binAttDoc = {
  _id: 'bin_doc',
  _attachments: { 'foo.txt': { content_type: 'text/plain', data: 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=' } },
};
/** An empty attachment. */
const binAttDoc2 = {
  _id: 'bin_doc2',
  _attachments: { 'foo.txt': { content_type: 'text/plain', data: '' } },
};
const jsonDoc = {
  _id: 'json_doc',
  _attachments: { 'foo.json': { content_type: 'application/json', data: 'eyJIZWxsbyI6IndvcmxkIn0=' } },
};
const pngData =
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAMAAAAoLQ9TAAAAMFBMVEX+9+' +
  'j+9OD+7tL95rr93qT80YD7x2L6vkn6syz5qRT4ogT4nwD4ngD4nQD4nQD4' +
  'nQDT2nT/AAAAcElEQVQY002OUQLEQARDw1D14f7X3TCdbfPnhQTqI5UqvG' +
  'OWIz8gAIXFH9zmC63XRyTsOsCWk2A9Ga7wCXlA9m2S6G4JlVwQkpw/Ymxr' +
  'UgNoMoyxBwSMH/WnAzy5cnfLFu+dK2l5gMvuPGLGJd1/9AOiBQiEgkzOpg' +
  'AAAABJRU5ErkJggg==';
const pngAttDoc = {
  _id: 'png_doc',
  _attachments: { 'foo.png': { content_type: 'image/png', data: pngData } },
};

/** The digests PouchDB accepts for 'This is a base64 encoded text' as text/plain (ASCII vs libicu). */
const fooTxtDigests = ['md5-qUUYqS41RhwF0TrCsTAxFg==', 'md5-aEI7pOYCRBLTRQvvqYrrJQ==', 'md5-jeLnIuUvK7d+6gya044lVA=='];
/** The same for an empty text/plain attachment. */
const emptyTxtDigests = ['md5-1B2M2Y8AsgTpgAmY7PhCfg==', 'md5-cCkGbCesb17xjWYNV0GXmg==', 'md5-3gIs+o2eJiHrXZqziQZqBA=='];

const textAtt = (s: string) => ({ content_type: 'text/plain', data: btoa(s) });

/** 'many atts': five documents, one to two text attachments each. */
function manyAttsDocs(): any[] {
  return [
    { _id: 'baz', _attachments: { 'text1.txt': textAtt('text1'), 'text2.txt': textAtt('text2') } },
    { _id: 'foo', _attachments: { 'text5.txt': textAtt('text5') } },
    { _id: 'quux', _attachments: { 'text3.txt': textAtt('text3'), 'text4.txt': textAtt('text4') } },
    { _id: 'zob', _attachments: { 'text6.txt': textAtt('text3') } },
    { _id: 'zorb', _attachments: { 'text2.txt': textAtt('text2'), 'text3.txt': textAtt('text3') } },
  ];
}

/** 'mixed atts': those, a deleted document, documents without attachments, an empty attachment. */
function mixedAttsDocs(): any[] {
  const [baz, foo, quux, zob, zorb] = manyAttsDocs();
  return [
    baz, foo, { _id: 'imdeleted', _deleted: true }, quux, { _id: 'imempty' }, zob, { _id: 'imempty2' }, zorb,
    { _id: 'imkindaempty', _attachments: { 'text0.txt': { content_type: 'text/plain', data: '' } } },
  ];
}

/** The five icon documents of the #3074 / #2771 tests. */
function iconDocs(): any[] {
  return icons.map((data, i) => ({ _id: String(i), _attachments: { 'foo.png': { data, content_type: 'image/png' } } }));
}

/** An attachment read with `{attachments: true, binary: true}` is a typed Buffer of the expected content. */
function assertBinaryAtt(att: any, expected: { content_type: string; data: string }, what: string): void {
  assert.ok(att, `${what}: attachment present`);
  assert.equal(att.stub, undefined, `${what}: no stub`);
  assert.ok(att.digest, `${what}: digest`);
  assert.equal(att.content_type, expected.content_type, `${what}: content_type`);
  assert.notEqual(typeof att.data, 'string', `${what}: data is not a string`);
  assert.ok(Buffer.isBuffer(att.data), `${what}: data is a Buffer`);
  assert.equal(att.data.type, expected.content_type, `${what}: data.type`);
  assert.equal(att.data.toString('base64'), expected.data, `${what}: content`);
}

/** Every attachment of `source` is in `saved` as binary data. */
function assertBinaryAtts(saved: any, source: any, what: string): void {
  if (!source._attachments) {
    assert.equal(saved._attachments, undefined, `${what}: no _attachments`);
    return;
  }
  for (const [name, expected] of Object.entries<any>(source._attachments)) {
    assertBinaryAtt(saved._attachments?.[name], expected, `${what}/${name}`);
  }
}

// ---------------------------------------------------------------------------------------------
// suite2 test.attachments.js-http

const H = 'http:';

test(`${H} 3357 Attachment names cant start with _`, async () => {
  const db = await remote('3357');
  const err = await failure(db.put({ _id: 'baz', _attachments: { '_text1.txt': textAtt('text1') } }));
  assert.equal(err.name, 'bad_request', wire(db));
});

test(`${H} 5736 warning for putAttachment without content_type`, async () => {
  const db = await remote('5736-putattachment');
  await db.putAttachment('bar', 'baz.txt', btoa('text'), '');
});

test(`${H} 5736 warning for bulkDocs attachments without content_type`, async () => {
  const db = await remote('5736-bulkdocs');
  await db.bulkDocs([{ _attachments: { 'att.txt': { data: btoa('well') } } }]);
});

test(`${H} fetch atts with open_revs and missing`, async () => {
  const db = await remote('open-revs-missing');
  await db.bulkDocs({
    docs: [{
      _id: 'frog', _rev: '1-x', _revisions: { start: 1, ids: ['x'] },
      _attachments: { 'foo.txt': { content_type: 'text/plain', data: '' } },
    }],
    new_edits: false,
  });
  const res = await db.get('frog', { revs: true, open_revs: ['1-x', '2-fake'], attachments: true });
  assert.equal(res.filter((x: any) => x.ok).length, 1, wire(db));
  assert.equal(res.filter((x: any) => x.ok && x.ok._attachments).length, 1, wire(db));
});

test(`${H} issue 2803 should throw 412`, async () => {
  const db = await remote('2803-1');
  await db.put(clone(binAttDoc));
  const doc = await db.get(binAttDoc._id);
  doc._attachments['bar.txt'] = { stub: true, digest: 'md5-sorryIDoNotReallyExist==' };
  const err = await failure(db.put(doc));
  assert.equal(err.status, 412, `got improper error: ${err}\n${wire(db)}`);
});

test(`${H} issue 2803 should throw 412 part 2`, async () => {
  const db = await remote('2803-2');
  const stubDoc = {
    _id: 'stubby',
    _attachments: { 'foo.txt': { content_type: 'text/plain', digest: 'md5-aEI7pOYCRBLTRQvvqYrrJQ==', stub: true } },
  };
  const err = await failure(db.put(stubDoc));
  assert.equal(err.status, 412, `got improper error: ${err}\n${wire(db)}`);
});

test(`${H} issue 2803 should throw 412 part 3`, async () => {
  const db = await remote('2803-3');
  await db.put(clone(binAttDoc));
  // (PouchDB's test adds foo.json to a copy it never saves, then reads the document again.)
  const doc = await db.get(binAttDoc._id);
  doc._attachments['bar.txt'] = { stub: true, digest: 'md5-sorryIDoNotReallyExist==' };
  const err = await failure(db.put(doc));
  assert.equal(err.status, 412, `got improper error: ${err}\n${wire(db)}`);
});

test(`${H} issue 2803 should throw 412 part 4`, async () => {
  const db = await remote('2803-4');
  await db.put(clone(binAttDoc));
  const doc = await db.get(binAttDoc._id);
  doc._attachments['bar.txt'] = { stub: true, digest: 'md5-sorryIDoNotReallyExist==' };
  doc._attachments['baz.txt'] = { stub: true, digest: 'md5-yahNoIDoNotExistEither==' };
  const err = await failure(db.put(doc));
  assert.equal(err.status, 412, `got improper error: ${err}\n${wire(db)}`);
});

test(`${H} #2858 {binary: true} in get()`, async () => {
  const db = await remote('2858-get');
  const docs = [binAttDoc, binAttDoc2, pngAttDoc];
  await db.bulkDocs(clone(docs));
  await Promise.all(docs.map(async (doc) => {
    const saved = await db.get(doc._id, { attachments: true, binary: true });
    assertBinaryAtts(saved, doc, doc._id);
  }));
});

test(`${H} #2858 {binary: true} in allDocs() 1`, async () => {
  const db = await remote('2858-alldocs-1');
  const docs: any[] = [binAttDoc, binAttDoc2, pngAttDoc, { _id: 'foo' }];
  await db.bulkDocs(clone(docs));
  await Promise.all(docs.map(async (doc) => {
    const res = await db.allDocs({ key: doc._id, attachments: true, binary: true, include_docs: true });
    assert.equal(res.rows.length, 1);
    assertBinaryAtts(res.rows[0].doc, doc, doc._id);
  }));
});

test(`${H} #2858 {binary: true} in allDocs() 2`, async () => {
  const db = await remote('2858-alldocs-2');
  const docs: any[] = [binAttDoc, binAttDoc2, pngAttDoc, { _id: 'foo' }];
  await db.bulkDocs(clone(docs));
  const res = await db.allDocs({ include_docs: true, attachments: true, binary: true });
  for (const doc of docs) {
    const saved = res.rows.map((r: any) => r.doc).find((d: any) => d._id === doc._id);
    assertBinaryAtts(saved, doc, doc._id);
  }
});

test(`${H} #2858 {binary: true} in allDocs() 3`, async () => {
  const db = await remote('2858-alldocs-3');
  const docs: any[] = [binAttDoc, binAttDoc2, pngAttDoc, { _id: 'bar' }, { _id: 'foo', _deleted: true }];
  await db.bulkDocs(clone(docs));
  const res = await db.allDocs({ include_docs: true, attachments: true, binary: true });
  assert.equal(res.rows.length, 4);
  for (const doc of docs.filter((d) => !d._deleted)) {
    const saved = res.rows.map((r: any) => r.doc).find((d: any) => d._id === doc._id);
    assertBinaryAtts(saved, doc, doc._id);
  }
});

test(`${H} #2858 {binary: true} in allDocs() 4`, async () => {
  const db = await remote('2858-alldocs-4');
  const docs: any[] = [binAttDoc, binAttDoc2, pngAttDoc, { _id: 'bar' }, { _id: 'foo', _deleted: true }];
  await db.bulkDocs(clone(docs));
  let res = await db.allDocs({ attachments: true, binary: true });
  assert.equal(res.rows.length, 4);
  for (const row of res.rows) assert.equal(row.doc, undefined);
  res = await db.allDocs({ binary: true });
  assert.equal(res.rows.length, 4);
  for (const row of res.rows) assert.equal(row.doc, undefined);
});

test(`${H} #2858 {binary: true} in allDocs() 5`, async () => {
  const db = await remote('2858-alldocs-5');
  const docs: any[] = [binAttDoc, binAttDoc2, pngAttDoc, { _id: 'bar' }, { _id: 'foo', deleted: true }];
  await db.bulkDocs(clone(docs));
  const res = await db.allDocs({
    keys: [binAttDoc._id, binAttDoc2._id, pngAttDoc._id, 'foo', 'bar'],
    attachments: true, binary: true, include_docs: true,
  });
  assert.equal(res.rows.length, 5);
  // PouchDB pairs rows with docs by position: rows 3 and 4 (foo, bar) both have no attachments.
  res.rows.forEach((row: any, i: number) => assertBinaryAtts(row.doc, docs[i], row.id));
});

test(`${H} #2858 {binary: true} in allDocs(), many atts`, async () => {
  const db = await remote('2858-alldocs-many');
  const docs = manyAttsDocs();
  await db.bulkDocs(clone(docs));
  const res = await db.allDocs({ attachments: true, binary: true, include_docs: true });
  assert.equal(res.rows.length, 5);
  for (const row of res.rows) assertBinaryAtts(row.doc, docs.find((d) => d._id === row.id), row.id);
});

test(`${H} #2858 {binary: true} in allDocs(), mixed atts`, async () => {
  const db = await remote('2858-alldocs-mixed');
  const docs = mixedAttsDocs();
  await db.bulkDocs(clone(docs));
  const res = await db.allDocs({ attachments: true, binary: true, include_docs: true });
  assert.equal(res.rows.length, 8);
  for (const row of res.rows) {
    const doc = docs.find((d) => d._id === row.id);
    if (doc._deleted) assert.equal(row.doc, undefined);
    else assertBinaryAtts(row.doc, doc, row.id);
  }
});

test(`${H} #2858 {binary: true} in changes() non-live`, async () => {
  const db = await remote('2858-changes');
  const docs: any[] = [binAttDoc, binAttDoc2, pngAttDoc, { _id: 'bar' }, { _id: 'foo', deleted: true }];
  await db.bulkDocs(clone(docs));
  const res = await db.changes({ attachments: true, binary: true, include_docs: true });
  assert.equal(res.results.length, 5);
  for (const row of res.results) assertBinaryAtts(row.doc, docs.find((d) => d._id === row.id), row.id);
});

test(`${H} #2858 {binary: true} in changes() non-live, many atts`, async () => {
  const db = await remote('2858-changes-many');
  const docs = manyAttsDocs();
  await db.bulkDocs(clone(docs));
  const res = await db.changes({ attachments: true, binary: true, include_docs: true });
  assert.equal(res.results.length, 5);
  for (const row of res.results) assertBinaryAtts(row.doc, docs.find((d) => d._id === row.id), row.id);
});

test(`${H} #2858 {binary: true} in changes() non-live, mixed atts`, async () => {
  const db = await remote('2858-changes-mixed');
  const docs = mixedAttsDocs();
  await db.bulkDocs(clone(docs));
  const res = await db.changes({ attachments: true, binary: true, include_docs: true });
  assert.equal(res.results.length, 9);
  // The deleted document's change carries its doc ({_id, _rev, _deleted}) without attachments.
  for (const row of res.results) assertBinaryAtts(row.doc, docs.find((d) => d._id === row.id), row.id);
});

test(`${H} #2858 {binary: true} non-live changes, complete event`, async () => {
  const db = await remote('2858-changes-complete');
  const docs = mixedAttsDocs();
  await db.bulkDocs(clone(docs));
  const results: any = await new Promise((resolve, reject) => {
    db.changes({ attachments: true, binary: true, include_docs: true }).on('error', reject).on('complete', resolve);
  });
  for (const row of results.results) {
    if (row.deleted) {
      assert.equal(row.doc._attachments, undefined);
      continue;
    }
    assertBinaryAtts(row.doc, docs.find((d) => d._id === row.id), row.id);
  }
});

/** PouchDB's checks of a live change in the #2858 tests on the five-document set. */
function checkLiveBinaryChange(change: any, docs: any[]): void {
  if (change.deleted) {
    assert.equal(change.doc, undefined);
    return;
  }
  assertBinaryAtts(change.doc, docs.find((d) => d._id === change.id), change.id);
}

test(`${H} #2858 {binary: true} in live changes`, async () => {
  const db = await remote('2858-live');
  const docs: any[] = [binAttDoc, binAttDoc2, pngAttDoc, { _id: 'bar' }, { _id: 'foo', deleted: true }];
  await db.bulkDocs(clone(docs));
  const { changes } = await liveChanges(db, { attachments: true, binary: true, include_docs: true }, 5);
  assert.equal(changes.length, 5);
  for (const change of changes) checkLiveBinaryChange(change, docs);
});

test(`${H} #2858 {binary: true} in live changes, mixed atts`, async () => {
  const db = await remote('2858-live-mixed');
  const docs = mixedAttsDocs();
  await db.bulkDocs(clone(docs));
  const { changes } = await liveChanges(db, { attachments: true, binary: true, include_docs: true }, 9);
  assert.equal(changes.length, 9);
  for (const change of changes) {
    if (change.deleted) {
      assert.equal(change.doc._attachments, undefined);
      continue;
    }
    assertBinaryAtts(change.doc, docs.find((d) => d._id === change.id), change.id);
  }
});

test(`${H} #2858 {binary: true} in live+retry changes`, async () => {
  const db = await remote('2858-live-retry');
  const docs: any[] = [binAttDoc, binAttDoc2, pngAttDoc, { _id: 'bar' }, { _id: 'foo', deleted: true }];
  await db.bulkDocs(clone(docs));
  const { changes } = await liveChanges(db, { attachments: true, binary: true, include_docs: true }, 5);
  assert.equal(changes.length, 5);
  for (const change of changes) checkLiveBinaryChange(change, docs);
});

test(`${H} #2858 {binary: true} in live changes, attachments:false`, async () => {
  const db = await remote('2858-live-noatts');
  const docs: any[] = [binAttDoc, binAttDoc2, pngAttDoc, { _id: 'bar' }, { _id: 'foo', deleted: true }];
  await db.bulkDocs(clone(docs));
  const { changes } = await liveChanges(db, { include_docs: true, binary: true }, 5);
  assert.equal(changes.length, 5);
  for (const change of changes) {
    const doc = docs.find((d) => d._id === change.id);
    if (!doc._attachments) {
      assert.equal(change.doc._attachments, undefined);
      continue;
    }
    const name = Object.keys(doc._attachments)[0]!;
    const att = change.doc._attachments[name];
    assert.equal(att.stub, true);
    assert.ok(att.digest);
    assert.equal(att.content_type, doc._attachments[name].content_type);
    assert.equal(att.data, undefined);
  }
});

test(`${H} #2858 {binary: true} in live changes, include_docs:false`, async () => {
  const db = await remote('2858-live-nodocs');
  const docs: any[] = [binAttDoc, binAttDoc2, pngAttDoc, { _id: 'bar' }, { _id: 'foo', deleted: true }];
  await db.bulkDocs(clone(docs));
  const { changes } = await liveChanges(db, { attachments: true, binary: true }, 5);
  assert.equal(changes.length, 5);
  for (const change of changes) assert.equal(change.doc, undefined);
});

test(`${H} Measures length correctly after put()`, async () => {
  const db = await remote('measures-length');
  await db.put(clone(binAttDoc));
  const doc = await db.get(binAttDoc._id);
  delete doc._attachments['foo.txt'].revpos;
  const digest = doc._attachments['foo.txt'].digest;
  assert.ok(fooTxtDigests.includes(digest), `expected ${digest} to be in: ${JSON.stringify(fooTxtDigests)}`);
  delete doc._attachments['foo.txt'].digest;
  assert.deepEqual(doc._attachments, { 'foo.txt': { content_type: 'text/plain', stub: true, length: 29 } });
});

/** The #3074 expectations: inline icons with attachments, stubs without. */
const iconsInline = () => icons.map((icon, i) => ({ 'foo.png': { content_type: 'image/png', data: icon, digest: iconDigests[i] } }));
const iconStubs = () => icons.map((_, i) => ({ content_type: 'image/png', stub: true, digest: iconDigests[i], length: iconLengths[i] }));

test(`${H} #3074 non-live changes()`, async () => {
  const db = await remote('3074-changes');
  await db.bulkDocs(iconDocs());
  let res = await db.changes({ include_docs: true, attachments: true });
  assert.deepEqual(res.results.sort(byId).map((c: any) => {
    delete c.doc._attachments['foo.png'].revpos;
    return c.doc._attachments;
  }), iconsInline(), 'when attachments=true');
  res = await db.changes({ include_docs: true });
  assert.deepEqual(res.results.sort(byId).map((c: any) => {
    delete c.doc._attachments['foo.png'].revpos;
    return c.doc._attachments['foo.png'];
  }), iconStubs(), 'when attachments=false');
  res = await db.changes({ attachments: true });
  assert.equal(res.results.length, 5);
  for (const row of res.results) assert.equal(row.doc, undefined, 'no doc when attachments=true but include_docs=false');
  res = await db.changes();
  assert.equal(res.results.length, 5);
  for (const row of res.results) assert.equal(row.doc, undefined, 'no doc when attachments=false and include_docs=false');
});

test(`${H} #3074 live changes()`, async () => {
  const db = await remote('3074-live');
  await db.bulkDocs(iconDocs());
  let res = await liveChanges(db, { include_docs: true, attachments: true }, 5);
  assert.deepEqual(res.changes.sort(byId).map((c: any) => {
    delete c.doc._attachments['foo.png'].revpos;
    return c.doc._attachments;
  }), iconsInline(), 'when attachments=true');
  res = await liveChanges(db, { include_docs: true }, 5);
  assert.deepEqual(res.changes.sort(byId).map((c: any) => {
    delete c.doc._attachments['foo.png'].revpos;
    return c.doc._attachments['foo.png'];
  }), iconStubs(), 'when attachments=false');
  res = await liveChanges(db, { attachments: true }, 5);
  assert.equal(res.changes.length, 5);
  for (const row of res.changes) assert.equal(row.doc, undefined, 'no doc when attachments=true but include_docs=false');
  res = await liveChanges(db, {}, 5);
  assert.equal(res.changes.length, 5);
  for (const row of res.changes) assert.equal(row.doc, undefined, 'no doc when attachments=false and include_docs=false');
});

test(`${H} #3074 non-live changes(), no attachments`, async () => {
  const db = await remote('3074-changes-noatts');
  await db.bulkDocs([0, 1, 2, 3, 4].map((i) => ({ _id: String(i) })));
  let res = await db.changes({ include_docs: true, attachments: true });
  assert.deepEqual(res.results.sort(byId).map((c: any) => !!c.doc._attachments), [false, false, false, false, false]);
  res = await db.changes({ include_docs: true });
  assert.deepEqual(res.results.sort(byId).map((c: any) => !!c.doc._attachments), [false, false, false, false, false]);
  res = await db.changes({ attachments: true });
  assert.equal(res.results.length, 5);
  for (const row of res.results) assert.equal(row.doc, undefined);
  res = await db.changes();
  assert.equal(res.results.length, 5);
  for (const row of res.results) assert.equal(row.doc, undefined);
});

test(`${H} #3074 live changes(), no attachments`, async () => {
  const db = await remote('3074-live-noatts');
  await db.bulkDocs([0, 1, 2, 3, 4].map((i) => ({ _id: String(i) })));
  let res = await liveChanges(db, { include_docs: true, attachments: true }, 5);
  assert.deepEqual(res.changes.sort(byId).map((c: any) => !!c.doc._attachments), [false, false, false, false, false]);
  res = await liveChanges(db, { include_docs: true }, 5);
  assert.deepEqual(res.changes.sort(byId).map((c: any) => !!c.doc._attachments), [false, false, false, false, false]);
  res = await liveChanges(db, { attachments: true }, 5);
  assert.equal(res.changes.length, 5);
  for (const row of res.changes) assert.equal(row.doc, undefined);
  res = await liveChanges(db, {}, 5);
  assert.equal(res.changes.length, 5);
  for (const row of res.changes) assert.equal(row.doc, undefined);
});

test(`${H} #3881 filter extraneous keys from _attachments`, async () => {
  const db = await remote('3881');
  await db.put({
    _id: 'foo',
    _attachments: { 'foo.txt': { data: '', content_type: 'text/plain', follows: false, foo: 'bar', baz: true, quux: 1 } },
  });
  const doc = await db.get('foo', { attachments: true });
  const keys = Object.keys(doc._attachments['foo.txt']).filter((k) => k !== 'revpos').sort();
  assert.deepEqual(keys, ['content_type', 'data', 'digest'], wire(db));
});

test(`${H} #2771 allDocs() 1, single attachment`, async () => {
  const db = await remote('2771-1');
  await db.put(clone(binAttDoc));
  let res = await db.allDocs({ key: binAttDoc._id, include_docs: true });
  const doc = res.rows[0].doc;
  delete doc._attachments['foo.txt'].revpos;
  const digest = doc._attachments['foo.txt'].digest;
  assert.ok(fooTxtDigests.includes(digest), `expected ${digest} to be in: ${JSON.stringify(fooTxtDigests)}`);
  delete doc._attachments['foo.txt'].digest;
  assert.deepEqual(doc._attachments, { 'foo.txt': { content_type: 'text/plain', stub: true, length: 29 } });
  res = await db.allDocs({ key: binAttDoc._id, include_docs: true, attachments: true });
  const att = res.rows[0].doc._attachments['foo.txt'];
  assert.equal(att.content_type, binAttDoc._attachments['foo.txt'].content_type);
  assert.equal(att.data, binAttDoc._attachments['foo.txt'].data);
});

test(`${H} #2771 allDocs() 2, many docs same att`, async () => {
  const db = await remote('2771-2');
  await db.bulkDocs([0, 1, 2, 3, 4].map((i) => ({
    _id: String(i),
    _attachments: { 'foo.txt': { data: 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=', content_type: 'text/plain' } },
  })));
  const res = await db.allDocs({ include_docs: true, attachments: true });
  const attachments = res.rows.map((row: any) => {
    const att = row.doc._attachments['foo.txt'];
    delete att.revpos;
    assert.ok(att.digest);
    delete att.digest;
    return row.doc._attachments;
  });
  assert.deepEqual(attachments, [1, 2, 3, 4, 5].map(() => ({
    'foo.txt': { content_type: 'text/plain', data: 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=' },
  })));
});

test(`${H} #2771 allDocs() 3, many docs diff atts`, async () => {
  const db = await remote('2771-3');
  await db.bulkDocs(iconDocs());
  let res = await db.allDocs({ include_docs: true, attachments: true });
  assert.deepEqual(res.rows.map((row: any) => {
    delete row.doc._attachments['foo.png'].revpos;
    return row.doc._attachments;
  }), iconsInline());
  res = await db.allDocs({ include_docs: true });
  assert.deepEqual(res.rows.map((row: any) => {
    delete row.doc._attachments['foo.png'].revpos;
    return row.doc._attachments['foo.png'];
  }), iconStubs());
});

test(`${H} #2771 allDocs() 4, mix of atts and no atts`, async () => {
  const db = await remote('2771-4');
  await db.bulkDocs([0, 1, 2, 3, 4].map((i) => (i % 2 === 1
    ? { _id: String(i), _attachments: { 'foo.png': { data: icons[i], content_type: 'image/png' } } }
    : { _id: String(i) })));
  let res = await db.allDocs({ include_docs: true, attachments: true });
  assert.deepEqual(res.rows.map((row: any, i: number) => {
    if (i % 2 === 0) return null;
    delete row.doc._attachments['foo.png'].revpos;
    return row.doc._attachments;
  }), iconsInline().map((v, i) => (i % 2 === 0 ? null : v)));
  res = await db.allDocs({ include_docs: true });
  assert.deepEqual(res.rows.map((row: any, i: number) => {
    if (i % 2 === 0) return null;
    delete row.doc._attachments['foo.png'].revpos;
    return row.doc._attachments['foo.png'];
  }), iconStubs().map((v, i) => (i % 2 === 0 ? null : v)));
});

test(`${H} #2771 allDocs() 5, no atts`, async () => {
  const db = await remote('2771-5');
  await db.bulkDocs([0, 1, 2, 3, 4].map((i) => ({ _id: String(i) })));
  for (const opts of [{ include_docs: true, attachments: true }, { include_docs: true }]) {
    const res = await db.allDocs(opts);
    assert.equal(res.rows.length, 5);
    for (const row of res.rows) {
      assert.ok(row.doc);
      assert.equal(row.doc._attachments, undefined);
    }
  }
});

test(`${H} #2771 allDocs() 6, no docs`, async () => {
  const db = await remote('2771-6');
  await db.bulkDocs([0, 1, 2, 3, 4].map((i) => ({ _id: String(i) })));
  let res = await db.allDocs({ include_docs: true, attachments: true, keys: [] });
  assert.equal(res.rows.length, 0, wire(db));
  res = await db.allDocs({ include_docs: true, keys: [] });
  assert.equal(res.rows.length, 0);
});

test(`${H} #2771 allDocs() 7, revisions and deletions`, async () => {
  const db = await remote('2771-7');
  await db.put({ _id: 'doc', _attachments: { 'foo.txt': { content_type: 'text/plain', data: 'Zm9vYmFy' } } });
  let res = await db.allDocs({ keys: ['doc'], attachments: true, include_docs: true });
  let doc = res.rows[0].doc;
  assert.equal(doc._attachments['foo.txt'].data, 'Zm9vYmFy');
  doc._attachments['foo.txt'] = { content_type: 'text/plain', data: 'dG90bw==' };
  await db.put(doc);
  res = await db.allDocs({ keys: ['doc'], attachments: true, include_docs: true });
  doc = res.rows[0].doc;
  assert.equal(doc._attachments['foo.txt'].data, 'dG90bw==');
  const removed = await db.remove(doc);
  res = await db.allDocs({ keys: ['doc'], attachments: true, include_docs: true });
  // CouchDB gives `doc: null`; PouchDB's test accepts null or absent.
  assert.ok(res.rows[0].doc === undefined || res.rows[0].doc === null, JSON.stringify(res.rows[0]));
  delete res.rows[0].doc;
  assert.deepEqual(res.rows, [{ id: 'doc', key: 'doc', value: { rev: removed.rev, deleted: true } }]);
});

test(`${H} #2771 allDocs() 8, empty attachment`, async () => {
  const db = await remote('2771-8');
  await db.put(clone(binAttDoc2));
  let res = await db.allDocs({ key: binAttDoc2._id, include_docs: true });
  const doc = res.rows[0].doc;
  delete doc._attachments['foo.txt'].revpos;
  const digest = doc._attachments['foo.txt'].digest;
  assert.ok(emptyTxtDigests.includes(digest), `expected ${digest} to be in: ${JSON.stringify(emptyTxtDigests)}`);
  delete doc._attachments['foo.txt'].digest;
  assert.deepEqual(doc._attachments, { 'foo.txt': { content_type: 'text/plain', stub: true, length: 0 } });
  res = await db.allDocs({ key: binAttDoc2._id, include_docs: true, attachments: true });
  const att = res.rows[0].doc._attachments['foo.txt'];
  assert.equal(att.content_type, 'text/plain');
  assert.equal(att.data, '');
});

test(`${H} No length for non-stubs`, async () => {
  const db = await remote('no-length-non-stubs');
  await db.put(clone(binAttDoc));
  const doc = await db.get(binAttDoc._id, { attachments: true });
  assert.equal(doc._attachments['foo.txt'].stub, undefined);
  assert.equal(doc._attachments['foo.txt'].length, undefined);
});

test(`${H} Test some attachments`, async () => {
  const db = await remote('some-attachments');
  await db.put(clone(binAttDoc));
  const doc = await db.get('bin_doc');
  assert.ok(doc._attachments?.['foo.txt'], 'doc has attachment');
  assert.equal(doc._attachments['foo.txt'].content_type, 'text/plain');
  let att = await db.getAttachment('bin_doc', 'foo.txt');
  assert.equal(att.type, 'text/plain');
  assert.equal(readBlob(att), 'This is a base64 encoded text');
  const put2 = await db.put(clone(binAttDoc2));
  att = await db.getAttachment('bin_doc2', 'foo.txt');
  assert.equal(att.type, 'text/plain');
  assert.equal(readBlob(att), '', 'Correct data returned');

  const info = await db.putAttachment('bin_doc2', 'foo2.txt', put2.rev, makeBlob('This is no base64 encoded text'), 'text/plain');
  assert.equal(info.ok, true);
  att = await db.getAttachment('bin_doc2', 'foo2.txt');
  assert.equal(att.type, 'text/plain');
  assert.ok(readBlob(att));
  const res = await db.get('bin_doc2', { attachments: true });
  assert.equal(res._attachments['foo2.txt'].stub, undefined, 'stub is false');
  assert.equal(res._attachments['foo2.txt'].data, 'VGhpcyBpcyBubyBiYXNlNjQgZW5jb2RlZCB0ZXh0');
  assert.equal(res._attachments['foo2.txt'].content_type, 'text/plain');
  assert.equal(res._attachments['foo.txt'].data, '');
});

test(`${H} Test getAttachment`, async () => {
  const db = await remote('getattachment');
  await db.put(clone(binAttDoc));
  const res = await db.getAttachment('bin_doc', 'foo.txt');
  assert.equal(res.type, 'text/plain');
  assert.equal(readBlob(res), 'This is a base64 encoded text', 'correct data');
});

/** A document with binary attachment '1', then '2' added beside its stub. */
async function twoBinaryAttachments(db: any): Promise<void> {
  await db.put({ _id: 'doc', _attachments: { 1: { content_type: 'application/octet-stream', data: btoa('1\u00002\u00013\u0002') } } });
  const doc = await db.get('doc');
  doc._attachments['2'] = { content_type: 'application/octet-stream', data: btoa('3\u00002\u00011\u0002') };
  await db.put(doc);
}

test(`${H} Test getAttachment with stubs`, async () => {
  const db = await remote('getattachment-stubs');
  await twoBinaryAttachments(db);
  let att = await db.getAttachment('doc', '1');
  assert.equal(att.type, 'application/octet-stream');
  assert.equal(readBlob(att), '1\u00002\u00013\u0002');
  att = await db.getAttachment('doc', '2');
  assert.equal(att.type, 'application/octet-stream');
  assert.equal(readBlob(att), '3\u00002\u00011\u0002');
});

test(`${H} Test get() with binary:true and stubs`, async () => {
  const db = await remote('get-binary-stubs');
  await twoBinaryAttachments(db);
  const doc = await db.get('doc', { attachments: true, binary: true });
  const att1 = doc._attachments['1'].data;
  const att2 = doc._attachments['2'].data;
  assert.equal(att1.type, 'application/octet-stream');
  assert.equal(att2.type, 'application/octet-stream');
  assert.equal(readBlob(att1), '1\u00002\u00013\u0002');
  assert.equal(readBlob(att2), '3\u00002\u00011\u0002');
});

test(`${H} Test attachments in allDocs/changes`, async () => {
  const db = await remote('alldocs-changes-stubs');
  const att0 = { data: 'YXR0YWNobWVudDA=', content_type: 'text/plain' };
  const att1 = { data: 'YXR0YWNobWVudDE=', content_type: 'text/plain' };
  const docs: any[] = [
    { _id: 'doc0' },
    { _id: 'doc1', _attachments: { att0 } },
    { _id: 'doc2', _attachments: { att0, att1 } },
    { _id: 'doc3', _attachments: { att0 } },
  ];
  await db.bulkDocs({ docs: clone(docs) });
  const checkStubs = (got: any[], what: string) => {
    assert.equal(got.length, 4, what);
    got.forEach((doc, i) => {
      const count = Object.keys(docs[i]._attachments ?? {}).length;
      if (count === 0) assert.equal(doc._attachments, undefined, `(${what}) doc${i} contains no attachments`);
      for (let j = 0; j < count; j++) assert.equal(doc._attachments[`att${j}`].stub, true, `(${what}) doc${i} contains att${j} stub`);
    });
  };
  const all = await db.allDocs({ include_docs: true });
  checkStubs(all.rows.map((r: any) => r.doc), 'allDocs');
  const seen: any[] = [];
  const complete: any = await new Promise((resolve, reject) => {
    db.changes({ include_docs: true }).on('change', (c: any) => seen.push(c)).on('error', reject).on('complete', resolve);
  });
  checkStubs(seen.sort(byId).map((c) => c.doc), 'onChange');
  checkStubs(complete.results.sort(byId).map((c: any) => c.doc), 'complete');
});

test(`${H} Test putAttachment with base64 plaintext`, async () => {
  const db = await remote('putattachment-base64');
  await db.putAttachment('doc', 'att', null, 'Zm9v', 'text/plain');
  const blob = await db.getAttachment('doc', 'att');
  assert.equal(blob.toString('base64'), 'Zm9v', 'should get the correct base64 back');
});

test(`${H} Test putAttachment with invalid base64`, async () => {
  const db = await remote('putattachment-invalid-base64');
  const err = await failure(db.putAttachment('doc', 'att', null, '\u65e5\u672c\u8a9e', 'text/plain'));
  assert.equal(err.message, 'Some query argument is invalid');
});

test(`${H} Test getAttachment with empty text`, async () => {
  const db = await remote('getattachment-empty');
  await db.put(clone(binAttDoc2));
  const res = await db.getAttachment('bin_doc2', 'foo.txt');
  assert.equal(typeof res, 'object', 'res is object, not a string');
  assert.equal(res.toString('base64'), '', 'correct data');
  const doc = await db.get(binAttDoc2._id);
  const att = doc._attachments['foo.txt'];
  assert.equal(att.stub, true);
  assert.ok(emptyTxtDigests.includes(att.digest), `expected ${att.digest} to be in: ${JSON.stringify(emptyTxtDigests)}`);
  assert.equal(att.content_type, 'text/plain');
  assert.equal(att.length, 0);
});

test(`${H} Test getAttachment with normal text`, async () => {
  const db = await remote('getattachment-text');
  await db.put(clone(binAttDoc));
  const res = await db.getAttachment('bin_doc', 'foo.txt');
  assert.equal(typeof res, 'object', 'res is object, not a string');
  assert.equal(res.toString('base64'), binAttDoc._attachments['foo.txt'].data, 'correct data');
});

test(`${H} Test getAttachment with PNG`, async () => {
  const db = await remote('getattachment-png');
  await db.put(clone(pngAttDoc));
  const res = await db.getAttachment('png_doc', 'foo.png');
  assert.equal(typeof res, 'object', 'res is object, not a string');
  assert.equal(res.toString('base64'), pngData, 'correct data');
});

test(`${H} Test getAttachment with PNG using bulkDocs`, async () => {
  const db = await remote('getattachment-png-bulkdocs');
  await db.bulkDocs([clone(pngAttDoc)]);
  const res = await db.getAttachment('png_doc', 'foo.png');
  assert.equal(res.toString('base64'), pngData, 'correct data');
});

test(`${H} Test getAttachment with PNG using post`, async () => {
  const db = await remote('getattachment-png-post');
  await db.post(clone(pngAttDoc));
  const res = await db.getAttachment('png_doc', 'foo.png');
  assert.equal(res.toString('base64'), pngData, 'correct data');
});

test(`${H} Test postAttachment with PNG then bulkDocs`, async () => {
  const db = await remote('postattachment-png-bulkdocs');
  await db.put({ _id: 'foo' });
  const doc = await db.get('foo');
  await db.putAttachment('foo', 'foo.png', doc._rev, binBlob(atob(pngData), 'image/png'), 'image/png');
  const res = await db.bulkDocs([{}]);
  assert.equal(res[0].ok, true, 'doc inserted');
});

test(`${H} proper stub behavior`, async () => {
  const db = await remote('proper-stub');
  await db.put(clone(binAttDoc));
  let doc = await db.get(binAttDoc._id);
  await db.putAttachment(doc._id, 'foo.json', doc._rev, jsonDoc._attachments['foo.json'].data, jsonDoc._attachments['foo.json'].content_type);
  doc = await db.get(binAttDoc._id);
  for (const [name, att] of Object.entries<any>(doc._attachments)) {
    assert.equal(att.data, undefined, name);
    assert.equal(att.stub, true, name);
    assert.ok(att.digest, name);
    assert.ok(att.content_type, name);
  }
  doc = await db.get(binAttDoc._id, { attachments: true });
  for (const [name, att] of Object.entries<any>(doc._attachments)) {
    assert.ok(att.data !== undefined && att.data !== null, name);
    assert.equal(att.stub, undefined, name);
    assert.ok(att.digest, name);
    assert.ok(att.content_type, name);
  }
});

test(`${H} Testing with invalid docs`, async () => {
  const db = await remote('invalid-docs');
  const err = await failure(db.bulkDocs({ docs: [{ _id: '_invalid', foo: 'bar' }, clone(binAttDoc)] }));
  assert.ok(err, 'bad request');
});

test(`${H} Test create attachment and doc in one go`, async () => {
  const db = await remote('create-att-and-doc');
  const res = await db.putAttachment('anotherdoc', 'mytext', makeBlob('Mytext'), 'text/plain');
  assert.ok(res.ok);
});

test(`${H} Test create attachment and doc in one go without callback`, async () => {
  const db = await remote('create-att-and-doc-nocb');
  const done = new Promise<{ complete: any; doc: any }>((resolve, reject) => {
    let doc: any;
    const feed = db.changes({ live: true })
      .on('complete', (complete: any) => resolve({ complete, doc }))
      .on('error', reject)
      .on('change', (change: any) => {
        if (change.id !== 'anotherdoc2') return;
        db.get(change.id, { attachments: true }).then((d: any) => {
          doc = d;
          feed.cancel();
        }, reject);
      });
  });
  await db.putAttachment('anotherdoc2', 'mytext', makeBlob('Mytext'), 'text/plain');
  const { complete, doc } = await done;
  assert.equal(complete.status, 'cancelled');
  assert.equal(typeof doc._attachments, 'object', 'doc has attachments object');
  assert.equal(doc._attachments.mytext.data, 'TXl0ZXh0');
});

test(`${H} Test create attachment without callback`, async () => {
  const db = await remote('create-att-nocb');
  const resp = await db.put({ _id: 'anotherdoc3' });
  const info = await db.info();
  const done = new Promise<{ complete: any; doc: any }>((resolve, reject) => {
    let doc: any;
    const feed = db.changes({ since: info.update_seq, live: true, include_docs: true })
      .on('complete', (complete: any) => resolve({ complete, doc }))
      .on('error', reject)
      .on('change', (change: any) => {
        if (change.id !== 'anotherdoc3') return;
        db.get(change.id, { attachments: true }).then((d: any) => {
          doc = d;
          feed.cancel();
        }, reject);
      });
  });
  await db.putAttachment('anotherdoc3', 'mytext', resp.rev, makeBlob('Mytext'), 'text/plain');
  const { complete, doc } = await done;
  assert.equal(complete.status, 'cancelled');
  assert.equal(typeof doc._attachments, 'object', 'doc has attachments object');
  assert.equal(doc._attachments.mytext.data, 'TXl0ZXh0');
});

test(`${H} Test put attachment on a doc without attachments`, async () => {
  const db = await remote('put-att-no-atts');
  const resp = await db.put({ _id: 'mydoc' });
  const res = await db.putAttachment('mydoc', 'mytext', resp.rev, makeBlob('Mytext'), 'text/plain');
  assert.ok(res.ok);
});

test(`${H} Test put attachment with unencoded name`, async () => {
  const db = await remote('put-att-unencoded-name');
  const resp = await db.put({ _id: 'mydoc' });
  const res = await db.putAttachment('mydoc', 'my/text?@', resp.rev, makeBlob('Mytext'), 'text/plain');
  assert.ok(res.ok);
  const doc = await db.get('mydoc', { attachments: true });
  assert.ok(doc._attachments['my/text?@'], `${JSON.stringify(Object.keys(doc._attachments ?? {}))}\n${wire(db)}`);
  const att = await db.getAttachment('mydoc', 'my/text?@');
  assert.equal(att.type, 'text/plain');
  assert.equal(readBlob(att), 'Mytext');
});

test(`${H} 3963 length property on stubs`, async () => {
  const db = await remote('3963');
  const checkAttachments = async () => {
    let doc = await db.get('bin_doc');
    assert.equal(doc._attachments['foo.txt'].stub, true);
    assert.equal(doc._attachments['foo.txt'].length, 29);
    const changes = await db.changes({ include_docs: true });
    doc = changes.results[0].doc;
    assert.equal(doc._attachments['foo.txt'].stub, true);
    assert.equal(doc._attachments['foo.txt'].length, 29);
    const all = await db.allDocs({ include_docs: true });
    doc = all.rows[0].doc;
    assert.equal(doc._attachments['foo.txt'].stub, true);
    assert.equal(doc._attachments['foo.txt'].length, 29);
    const live = await liveChanges(db, { include_docs: true }, 1);
    doc = live.changes[0].doc;
    assert.equal(doc._attachments['foo.txt'].stub, true);
    assert.equal(doc._attachments['foo.txt'].length, 29);
  };
  await db.put(clone(binAttDoc));
  await checkAttachments();
  await db.put(await db.get('bin_doc'));
  await checkAttachments();
});

test(`${H} Testing with invalid rev`, async () => {
  const db = await remote('invalid-rev');
  const doc: any = { _id: 'adoc' };
  const resp = await db.put(doc);
  doc._rev = resp.rev;
  doc.foo = 'bar';
  await db.put(doc);
  const err = await failure(db.putAttachment('adoc', 'foo.txt', doc._rev, makeBlob('bar'), 'text/plain'));
  assert.equal(err.name, 'conflict', 'error is a conflict');
});

test(`${H} Test put another attachment on a doc with attachments`, async () => {
  const db = await remote('put-another-att');
  const res1 = await db.put({ _id: 'mydoc' });
  const blob = makeBlob('Mytext');
  const res2 = await db.putAttachment('mydoc', 'mytext', res1.rev, blob, 'text/plain');
  const res3 = await db.putAttachment('mydoc', 'mytext2', res2.rev, blob, 'text/plain');
  assert.ok(res3.ok);
});

test(`${H} Test get with attachments: true if empty attachments`, async () => {
  const db = await remote('get-empty-atts');
  await db.put({ _id: 'foo', _attachments: {} });
  const res = await db.get('foo', { attachments: true });
  assert.equal(res._id, 'foo');
});

test(`${H} Test delete attachment from a doc`, async () => {
  const db = await remote('delete-att');
  const put = await db.put({
    _id: 'mydoc',
    _attachments: {
      mytext1: { content_type: 'text/plain', data: 'TXl0ZXh0MQ==' },
      mytext2: { content_type: 'text/plain', data: 'TXl0ZXh0Mg==' },
    },
  });
  let doc = await db.get('mydoc', { attachments: true });
  assert.ok('mytext1' in doc._attachments && 'mytext2' in doc._attachments);
  const err = await failure(db.removeAttachment('mydoc', 'mytext1', 0));
  assert.ok(err, 'removal should fail due to broken rev');
  await db.removeAttachment('mydoc', 'mytext1', put.rev);
  doc = await db.get('mydoc', { attachments: true });
  assert.ok(!('mytext1' in doc._attachments));
  assert.ok('mytext2' in doc._attachments);
  const res = await db.removeAttachment('mydoc', 'mytext2', doc._rev);
  assert.equal(res._attachments, undefined);
});

test(`${H} Test a document with a json string attachment`, async () => {
  const db = await remote('json-string-att');
  const results = await db.put(clone(jsonDoc));
  const doc = await db.get(results.id);
  assert.ok('foo.json' in doc._attachments);
  assert.equal(doc._attachments['foo.json'].content_type, 'application/json', 'doc has correct content type');
  const att = await db.getAttachment(results.id, 'foo.json');
  assert.equal(att.type, 'application/json');
  // (PouchDB's test then compares its own fixture with itself; the content is checked here.)
  assert.equal(att.toString('base64'), 'eyJIZWxsbyI6IndvcmxkIn0=');
});

test(`${H} Test remove doc with attachment`, async () => {
  const db = await remote('remove-doc-with-att');
  const resp = await db.put({ _id: 'mydoc' });
  const res = await db.putAttachment('mydoc', 'mytext', resp.rev, makeBlob('Mytext'), 'text/plain');
  assert.ok(res.ok);
  const doc = await db.get('mydoc', { attachments: false });
  const removed = await db.remove(doc);
  assert.ok(removed.ok);
});

test(`${H} Try to insert a doc with unencoded attachment`, async () => {
  const db = await remote('unencoded-att');
  const err = await failure(db.put({
    _id: 'foo',
    _attachments: { 'foo.txt': { content_type: 'text/plain', data: 'this should have been encoded!' } },
  }));
  assert.ok(err);
});

test(`${H} Try to get attachment of unexistent doc`, async () => {
  const db = await remote('att-of-missing-doc');
  assert.ok(await failure(db.getAttachment('unexistent', 'attachment')), 'Correctly returned error');
});

test(`${H} Test synchronous getAttachment`, async () => {
  const db = await remote('sync-getattachment');
  assert.ok(await failure(db.getAttachment('unexistent', 'attachment')), 'Correctly returned error');
});

test(`${H} Test synchronous putAttachment with text data`, async () => {
  const db = await remote('sync-putattachment-text');
  await db.putAttachment('a', 'foo2.txt', '', makeBlob('foobaz'), 'text/plain');
  const doc = await db.get('a', { attachments: true });
  assert.equal(doc._attachments['foo2.txt'].data, 'Zm9vYmF6');
  assert.equal(doc._attachments['foo2.txt'].content_type, 'text/plain');
});

test(`${H} Test synchronous putAttachment with no text data`, async () => {
  const db = await remote('sync-putattachment-empty');
  await db.putAttachment('a', 'foo2.txt', '', '', 'text/plain');
  const doc = await db.get('a', { attachments: true });
  assert.equal(doc._attachments['foo2.txt'].data, '');
  assert.ok(doc._attachments['foo2.txt'].content_type.startsWith('text/plain'), 'expected content-type to start with text/plain');
});

test(`${H} Test put with partial stubs`, async () => {
  const db = await remote('partial-stubs');
  await db.put({ _id: 'doc', _attachments: { 'foo.txt': textAtt('foo'), 'bar.txt': textAtt('foo') } });
  let doc = await db.get('doc');
  doc._attachments['baz.txt'] = textAtt('foo');
  // foo and bar are stubs now, baz is not.
  await db.put(doc);
  doc = await db.get('doc', { attachments: true });
  assert.notEqual(doc._rev, '2-x');
  assert.equal(Object.keys(doc._attachments).length, 3);
  for (const att of Object.values<any>(doc._attachments)) {
    assert.equal(att.data, 'Zm9v');
    assert.equal(att.content_type, 'text/plain');
  }
});

test(`${H} Test put with attachments and new_edits=false`, async () => {
  const db = await remote('new-edits-false');
  const doc = {
    _id: 'doc', _rev: '2-x',
    _attachments: { 'foo.txt': textAtt('foo'), 'bar.txt': textAtt('foo'), 'baz.txt': textAtt('foo') },
    _revisions: { start: 2, ids: ['x', 'a'] },
  };
  await db.bulkDocs([clone(doc)], { new_edits: false });
  await db.get(doc._id);
  await db.bulkDocs([clone(doc)], { new_edits: false });
  const got = await db.get(doc._id, { attachments: true });
  assert.equal(got._rev, '2-x');
  assert.equal(Object.keys(got._attachments).length, 3);
  for (const att of Object.values<any>(got._attachments)) {
    assert.equal(att.data, 'Zm9v');
    assert.equal(att.content_type, 'text/plain');
  }
});

test(`${H} Test getAttachment with specific rev`, async () => {
  const db = await remote('getattachment-rev');
  const doc: any = { _id: 'a' };
  const rev1 = (await db.put(doc)).rev;
  doc._rev = rev1;
  doc._attachments = { 'foo.txt': textAtt('foo') };
  const rev2 = (await db.put(doc)).rev;
  doc._rev = rev2;
  delete doc._attachments;
  const rev3 = (await db.put(doc)).rev;
  assert.ok(await db.getAttachment('a', 'foo.txt', { rev: rev2 }));
  const errors = await Promise.all([
    failure(db.getAttachment('a', 'foo.txt', { rev: rev1 })),
    failure(db.getAttachment('a', 'foo.txt', { rev: '3-fake' })),
    failure(db.getAttachment('a', 'foo.txt')),
    failure(db.getAttachment('a', 'foo.txt', {})),
    failure(db.getAttachment('a', 'foo.txt', { rev: rev3 })),
  ]);
  errors.forEach((err, i) => assert.equal(err.status, 404, `case ${i}: ${err}\n${wire(db)}`));
});

test(`${H} Test getAttachment with diff revs and content`, async () => {
  const db = await remote('getattachment-diff-revs');
  const doc: any = { _id: 'a', _attachments: { 'foo.txt': textAtt('foo') } };
  const rev1 = (await db.put(doc)).rev;
  doc._rev = rev1;
  doc._attachments = { 'foo.txt': textAtt('bar') };
  const rev2 = (await db.put(doc)).rev;
  doc._rev = rev2;
  doc._attachments = { 'foo.txt': textAtt('baz') };
  const rev3 = (await db.put(doc)).rev;
  const cases: [Promise<any>, string][] = [
    [db.getAttachment('a', 'foo.txt'), 'baz'],
    [db.getAttachment('a', 'foo.txt', { rev: rev3 }), 'baz'],
    [db.getAttachment('a', 'foo.txt', { rev: rev2 }), 'bar'],
    [db.getAttachment('a', 'foo.txt', { rev: rev1 }), 'foo'],
  ];
  for (const [promise, expected] of cases) {
    const blob = await promise;
    assert.equal(blob.type, 'text/plain');
    assert.equal(readBlob(blob), expected, "didn't get blob we expected for rev");
  }
});

test(`${H} Test stubs`, async () => {
  const db = await remote('stubs');
  await db.putAttachment('a', 'foo2.txt', '', '', 'text/plain');
  const docs = await db.allDocs({ include_docs: true });
  assert.equal(docs.rows[0].stub, undefined, 'no stub');
});

test(`${H} Try to get unexistent attachment of some doc`, async () => {
  const db = await remote('missing-att');
  await db.put({ _id: 'foo' });
  assert.ok(await failure(db.getAttachment('foo', 'unexistentAttachment')), 'Correctly returned error');
});

test(`${H} putAttachment and getAttachment with plaintext`, async () => {
  const db = await remote('put-get-plaintext');
  await db.put({ _id: 'foo' });
  let doc = await db.get('foo');
  const data = binAttDoc._attachments['foo.txt'].data;
  await db.putAttachment('foo', 'foo.txt', doc._rev, binBlob(atob(data), 'text/plain'), 'text/plain');
  const blob = await db.getAttachment('foo', 'foo.txt');
  assert.equal(blob.type, 'text/plain');
  assert.equal(btoa(readBlob(blob)), data);
  doc = await db.get('foo');
  delete doc._attachments['foo.txt'].revpos;
  const digest = doc._attachments['foo.txt'].digest;
  assert.ok(fooTxtDigests.includes(digest), `expected ${digest} to be in: ${JSON.stringify(fooTxtDigests)}`);
  delete doc._attachments['foo.txt'].digest;
  assert.deepEqual(doc._attachments, { 'foo.txt': { content_type: 'text/plain', stub: true, length: 29 } });
});

test(`${H} putAttachment and getAttachment with png data`, async () => {
  const db = await remote('put-get-png');
  await db.put({ _id: 'foo' });
  let doc = await db.get('foo');
  await db.putAttachment('foo', 'foo.png', doc._rev, binBlob(atob(pngData), 'image/png'), 'image/png');
  const blob = await db.getAttachment('foo', 'foo.png');
  assert.equal(blob.type, 'image/png');
  assert.equal(btoa(readBlob(blob)), pngData);
  doc = await db.get('foo');
  delete doc._attachments['foo.png'].revpos;
  assert.deepEqual(doc._attachments, {
    'foo.png': { content_type: 'image/png', digest: 'md5-c6eA+rofKUsstTNQBKUc8A==', stub: true, length: 229 },
  });
});

test(`${H} putAttachment in new doc with base64`, async () => {
  const db = await remote('putattachment-new-doc-base64');
  await db.putAttachment('foo', 'att', 'Zm9v', 'text/plain');
  const doc = await db.get('foo', { attachments: true });
  assert.match(doc._attachments.att.content_type, /^text\/plain/);
  assert.equal(doc._attachments.att.data, 'Zm9v');
});

test(`${H} #2818 - save same attachment in different revs`, async () => {
  const db = await remote('2818-different-revs');
  const res = await db.put({ _id: 'foo' });
  await db.putAttachment('foo', 'att', res.rev, 'Zm9v', 'text/plain');
  let doc = await db.get('foo', { attachments: true });
  assert.match(doc._attachments.att.content_type, /^text\/plain/);
  assert.ok(doc._attachments.att.data);
  await db.put(await db.get('foo'));
  await db.compact();
  doc = await db.get('foo', { attachments: true });
  assert.match(doc._attachments.att.content_type, /^text\/plain/);
  assert.ok(doc._attachments.att.data.length > 0, 'attachment exists');
});

test(`${H} #2818 - save same attachment many times in parallel`, async () => {
  const db = await remote('2818-parallel');
  const docs = Array.from({ length: 50 }, (_, i) => ({
    _id: `doc${i}`,
    _attachments: { 'foo.txt': { content_type: 'text/plain', data: 'Zm9vYmFy' } },
  }));
  await db.bulkDocs(docs);
});

test(`${H} #2818 - revisions keep attachments (no compaction)`, async () => {
  const db = await remote('2818-revisions-keep');
  await db.put({ _id: 'doc', _attachments: { 'foo.txt': { content_type: 'text/plain', data: 'Zm9vYmFy' } } });
  let doc = await db.get('doc');
  const rev = doc._rev;
  doc._attachments['foo.txt'] = { content_type: 'text/plain', data: 'dG90bw==' };
  await db.put(doc);
  doc = await db.get('doc', { attachments: true });
  assert.equal(doc._attachments['foo.txt'].data, 'dG90bw==');
  doc = await db.get('doc', { rev, attachments: true });
  assert.equal(doc._attachments['foo.txt'].data, 'Zm9vYmFy');
});

test(`${H} #2818 - doesn't throw 409 if same filename`, async () => {
  const db = await remote('2818-no-409');
  const doc: any = { _id: 'doc', _attachments: { 'foo.txt': { content_type: 'text/plain', data: 'Zm9vYmFy' } } };
  const res = await db.put(doc);
  doc._rev = res.rev;
  doc._attachments['foo.txt'].data = 'dG90bw==';
  await db.put(doc);
});

test(`${H} #3008 test correct encoding/decoding of \\u0000 etc.`, async () => {
  const db = await remote('3008');
  const base64 = 'iVBORw0KGgoAAAANSUhEUgAAAhgAAAJLCAYAAAClnu9J' + 'AAAgAElEQVR4Xuy9B7ylZXUu/p62T5nOMAPM0BVJICQi' + 'ogjEJN5ohEgQ';
  await db.putAttachment('foo', 'foo.bin', base64, 'image/png');
  const blob = await db.getAttachment('foo', 'foo.bin');
  assert.equal(blob.type, 'image/png');
  assert.equal(btoa(readBlob(blob)), base64);
});

test(`${H} putAttachment and getAttachment with big png data`, async () => {
  const db = await remote('big-png');
  // 678 010 deterministic bytes in place of PouchDB's deps/bigimage.js.
  const chunks: Buffer[] = [];
  for (let i = 0, n = 0; n < 678010; i++) {
    const h = createHash('sha256').update(`bigimage-${i}`).digest();
    chunks.push(h);
    n += h.length;
  }
  const bytes = Buffer.concat(chunks).subarray(0, 678010);
  const data = bytes.toString('base64');
  await db.put({ _id: 'foo' });
  let doc = await db.get('foo');
  await db.putAttachment('foo', 'foo.png', doc._rev, binBlob(atob(data), 'image/png'), 'image/png');
  const blob = await db.getAttachment('foo', 'foo.png');
  assert.equal(blob.type, 'image/png');
  assert.ok(blob.equals(bytes), `${blob.length} bytes back`);
  doc = await db.get('foo');
  delete doc._attachments['foo.png'].revpos;
  assert.deepEqual(doc._attachments, {
    'foo.png': { content_type: 'image/png', digest: md5(bytes), stub: true, length: 678010 },
  });
});

test(`${H} #2709 \`revpos\` with putAttachment`, async () => {
  const db = await remote('2709-putattachment');
  await db.putAttachment('a', 'one', '', btoa('one'), 'text/plain');
  let doc = await db.get('a');
  assert.equal(doc._attachments.one.revpos, 1);
  await db.putAttachment('a', 'two', doc._rev, btoa('two'), 'text/plain');
  doc = await db.get('a');
  assert.equal(doc._attachments.two.revpos, 2);
  assert.equal(doc._attachments.one.revpos, 1);
  await db.putAttachment('a', 'one', doc._rev, btoa('one-changed'), 'text/plain');
  doc = await db.get('a');
  assert.equal(doc._attachments.one.revpos, 3);
  assert.equal(doc._attachments.two.revpos, 2);
});

test(`${H} #2709 \`revpos\` with inline attachment`, async () => {
  const db = await remote('2709-inline');
  await db.put({ _id: 'a', _attachments: { one: textAtt('one') } });
  let doc = await db.get('a');
  assert.equal(doc._attachments.one.revpos, 1);
  doc._attachments.two = textAtt('two');
  await db.put(doc);
  doc = await db.get('a');
  assert.equal(doc._attachments.two.revpos, 2);
  assert.equal(doc._attachments.one.revpos, 1);
  delete doc._attachments.one.stub;
  doc._attachments.one.data = btoa('one-changed');
  await db.put(doc);
  doc = await db.get('a');
  assert.equal(doc._attachments.one.revpos, 3, wire(db));
  assert.equal(doc._attachments.two.revpos, 2);
});

test(`${H} #2709 \`revpos\` with allDocs`, async () => {
  const db = await remote('2709-alldocs');
  await db.putAttachment('a', 'one', '', btoa('one'), 'text/plain');
  const docs = await db.allDocs({ keys: ['a'], include_docs: true });
  assert.equal(docs.rows[0].doc._attachments.one.revpos, 1);
});

// ---------------------------------------------------------------------------------------------
// suite2 test.attachments.js- <db>:<remote>, for the pairs involving http.

type Kind = 'local' | 'http';
const pairs: [Kind, Kind][] = [['local', 'http'], ['http', 'http'], ['http', 'local']];

for (const [dbKind, remoteKind] of pairs) {
  const P = `${dbKind}:${remoteKind}`;
  /** PouchDB's `dbs.name` (adapters[0]) and `dbs.remote` (adapters[1]) for one test. */
  async function open(label: string): Promise<{ db: any; remote: any }> {
    const name = dbName(`${dbKind[0]}${remoteKind[0]}-${label}`);
    const db = dbKind === 'http' ? await fx.remote(name) : fx.local(name);
    const rem = remoteKind === 'http' ? await fx.remote(`${name}-remote`) : fx.local(`${name}-remote`);
    return { db, remote: rem };
  }

  /** Every row of allDocs(include_docs, attachments) has exactly foo.txt = 'foo', inline. */
  async function checkFooEverywhere(dbs: any[], rows: number): Promise<void> {
    for (const pouch of dbs) {
      const res = await pouch.allDocs({ include_docs: true, attachments: true });
      assert.equal(res.rows.length, rows, pouch.name);
      for (const row of res.rows) {
        assert.equal(Object.keys(row.doc._attachments).length, 1);
        const att = row.doc._attachments['foo.txt'];
        assert.equal(att.content_type, 'text/plain');
        assert.equal(att.data, btoa('foo'));
        assert.equal(typeof att.digest, 'string');
        assert.equal(att.length, undefined, `${pouch.name} ${row.id}: no length`);
        assert.equal(att.stub, undefined);
      }
    }
  }

  test(`${P} Attachments replicate back and forth`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('back-and-forth');
    const doc: any = { _id: 'doc', _attachments: { 'foo.txt': textAtt('foo') } };
    await db.bulkDocs({ docs: [clone(doc)] });
    await db.replicate.to(rem);
    doc._id = 'doc2';
    await rem.put(clone(doc));
    doc._id = 'doc3';
    await db.put(clone(doc));
    await db.sync(rem);
    await checkFooEverywhere([db, rem], 3);
  });

  test(`${P} Replicate same doc, same atts`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('same-doc-same-atts');
    const doc: any = { _id: 'doc', _attachments: { 'foo.txt': textAtt('foo') } };
    doc._rev = (await rem.put(clone(doc))).rev;
    await db.replicate.from(rem);
    doc._rev = (await db.put(clone(doc))).rev;
    await db.replicate.to(rem);
    await rem.put(clone(doc));
    await db.sync(rem);
    await checkFooEverywhere([db, rem], 1);
  });

  test(`${P} Replicate same doc, same atts 2`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('same-doc-same-atts-2');
    const doc: any = { _id: 'doc', _attachments: { 'foo.txt': textAtt('foo') } };
    doc._rev = (await db.put(clone(doc))).rev;
    await db.replicate.to(rem);
    doc._rev = (await rem.put(clone(doc))).rev;
    await db.replicate.from(rem);
    await db.put(clone(doc));
    await db.sync(rem);
    await checkFooEverywhere([db, rem], 1);
  });

  const docs1 = () => [clone(binAttDoc), { _id: '0', integer: 0 }, { _id: '1', integer: 1 }, { _id: '2', integer: 2 }, { _id: '3', integer: 3 }];

  test(`${P} Attachments replicate`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('attachments-replicate');
    await rem.bulkDocs({ docs: docs1() });
    await db.replicate.from(rem);
    const doc = await db.get('bin_doc', { attachments: true });
    assert.equal(doc._attachments['foo.txt'].data, binAttDoc._attachments['foo.txt'].data);
  });

  test(`${P} Attachment types replicate`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('attachment-types');
    await rem.bulkDocs({ docs: docs1() });
    await db.replicate.from(rem);
    const doc = await db.get('bin_doc', { attachments: true, binary: true });
    const blob = doc._attachments['foo.txt'].data;
    assert.equal(blob.type, 'text/plain');
    assert.equal(readBlob(blob), atob('VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ='));
  });

  test(`${P} Many many attachments replicate`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('many-many');
    const data = btoa('foobar');
    const doc: any = { _id: 'foo', _attachments: {} };
    const expectedKeys: string[] = [];
    for (let i = 0; i < 50; i++) {
      doc._attachments[`${i}.txt`] = { content_type: 'text/plain', data: binBlob(atob(data), 'text/plain') };
      expectedKeys.push(`${i}.txt`);
    }
    await db.put(doc);
    await db.replicate.to(rem);
    const got = await rem.get('foo', { attachments: true });
    const keys = Object.keys(got._attachments).sort();
    assert.deepEqual(keys, expectedKeys.sort());
    assert.equal(got._attachments[keys[0]!].data, data);
  });

  test(`${P} Many many png attachments replicate`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('many-many-png');
    const doc: any = { _id: 'foo', _attachments: {} };
    const expectedKeys: string[] = [];
    for (let i = 0; i < 50; i++) {
      doc._attachments[`${i}.txt`] = { content_type: 'image/png', data: binBlob(atob(pngData), 'image/png') };
      expectedKeys.push(`${i}.txt`);
    }
    await db.put(doc);
    await db.replicate.to(rem);
    const got = await rem.get('foo', { attachments: true });
    const keys = Object.keys(got._attachments).sort();
    assert.deepEqual(keys, expectedKeys.sort());
    assert.equal(got._attachments[keys[0]!].data, pngData);
  });

  test(`${P} Multiple attachments replicate`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('multiple');
    const data = 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=';
    let rev = (await db.put({ _id: 'foo' })).rev;
    await db.replicate.to(rem);
    rev = (await db.putAttachment('foo', 'foo1.txt', rev, data, 'text/plain')).rev;
    rev = (await db.putAttachment('foo', 'foo2.txt', rev, data, 'text/plain')).rev;
    await db.putAttachment('foo', 'foo3.txt', rev, data, 'text/plain');
    await db.replicate.to(rem);
    const doc = await rem.get('foo', { attachments: true });
    assert.deepEqual(Object.keys(doc._attachments).sort(), ['foo1.txt', 'foo2.txt', 'foo3.txt']);
  });

  test(`${P} #3961 Many attachments on same doc`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('3961');
    const doc: any = { _id: 'foo', _attachments: {} };
    for (let i = 0; i < 100; i++) doc._attachments[`${i}.txt`] = { data: btoa(String(i)), content_type: 'text/plain' };
    await db.put(doc);
    await db.replicate.to(rem);
    for (const pouch of [db, rem]) {
      let got = await pouch.get('foo', { attachments: true });
      assert.equal(Object.keys(got._attachments).length, 100);
      for (let i = 0; i < 100; i++) {
        const att = got._attachments[`${i}.txt`];
        assert.equal(att.stub, undefined);
        assert.equal(att.data, btoa(String(i)));
        assert.equal(att.content_type, 'text/plain');
      }
      got = await pouch.get('foo');
      assert.equal(Object.keys(got._attachments).length, 100);
      for (let i = 0; i < 100; i++) {
        const att = got._attachments[`${i}.txt`];
        assert.equal(att.stub, true);
        assert.equal(att.content_type, 'text/plain');
        assert.equal(att.length, String(i).length);
        assert.ok(att.digest);
      }
    }
  });

  test(`${P} Multiple attachments replicate, different docs (#2698)`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('2698');
    await rem.bulkDocs([0, 1, 2, 3, 4].map((i) => ({
      _id: String(i),
      _attachments: { 'foo.txt': { data: 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=', content_type: 'text/plain' } },
    })));
    await rem.replicate.to(db);
    const all = await db.allDocs();
    const docs = await Promise.all(all.rows.map((row: any) => db.get(row.id, { attachments: true })));
    assert.deepEqual(docs.map((doc: any) => {
      delete doc._attachments['foo.txt'].revpos;
      delete doc._attachments['foo.txt'].digest;
      return doc._attachments;
    }), [1, 2, 3, 4, 5].map(() => ({
      'foo.txt': { content_type: 'text/plain', data: 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=' },
    })));
  });

  test(`${P} Multiple attachments replicate, different docs png (#2698)`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('2698-png');
    await rem.bulkDocs(iconDocs());
    await rem.replicate.to(db);
    const all = await db.allDocs();
    const docs = await Promise.all(all.rows.map((row: any) => db.get(row.id, { attachments: true })));
    assert.deepEqual(docs.map((doc: any) => {
      delete doc._attachments['foo.png'].revpos;
      return doc._attachments;
    }), iconsInline());
    const stubs = await Promise.all(docs.map((doc: any) => db.get(doc._id)));
    assert.deepEqual(stubs.map((doc: any) => {
      delete doc._attachments['foo.png'].revpos;
      return doc._attachments['foo.png'];
    }), iconStubs());
  });

  test(`${P} #3932 attachments with tricky revpos`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('3932');
    await rem.put({ _id: 'test1', type: 'XX', name: 'Test1', _attachments: { '1.txt': { content_type: 'text/plain', data: 'Wlpa' } } });
    await db.replicate.from(rem);
    const rev = (await db.put(await db.get('test1'))).rev;
    await db.replicate.to(rem);
    await rem.putAttachment('test1', '2.txt', rev, 'Wlpa', 'text/plain');
    await rem.replicate.to(db);
    await db.get('test1', { attachments: true });
    const doc = await rem.get('test1', { attachments: true });
    doc._attachments = {
      '1.txt': { content_type: 'text/plain', data: 'Wlpa' },
      '2.txt': { content_type: 'text/plain', data: 'Wlpa' },
    };
    await db.put(doc);
    await db.put(await db.get('test1', { attachments: true }));
    await db.replicate.to(rem);
    for (const pouch of [db, rem]) {
      const got = await pouch.get('test1', { attachments: true });
      const names = Object.keys(got._attachments);
      assert.equal(names.length, 2);
      for (const name of names) assert.equal(got._attachments[name].data, 'Wlpa');
    }
  });

  test(`${P} replication with changing attachments`, { timeout: 60000 }, async () => {
    const { db, remote: rem } = await open('changing');
    const attachment = { content_type: 'text/plain', data: 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=' };
    const attachment2 = { content_type: 'text/plain', data: '' };
    await db.put({ _id: 'bin_doc', _attachments: { 'foo.txt': attachment } });
    assert.ok(await db.get('bin_doc'));
    let doc = await db.get('bin_doc');
    doc._attachments['bar.txt'] = attachment2;
    await db.put(doc);
    assert.ok(await db.get('bin_doc'));
    doc = await db.get('bin_doc', { attachments: true });
    assert.equal(doc._attachments['foo.txt'].stub, undefined);
    assert.equal(doc._attachments['bar.txt'].stub, undefined);
    await db.replicate.to(rem);
    doc = await rem.get('bin_doc', { attachments: true });
    assert.equal(doc._attachments['foo.txt'].stub, undefined);
    doc._attachments['baz.txt'] = doc._attachments['foo.txt'];
    await rem.put(doc);
    await rem.replicate.to(db);
    doc = await db.get('bin_doc', { attachments: true });
    assert.equal(doc._attachments['foo.txt'].stub, undefined);
    assert.equal(doc._attachments['bar.txt'].stub, undefined);
    assert.equal(doc._attachments['baz.txt'].stub, undefined);
    assert.ok(await db.get('bin_doc'));
  });

  if (dbKind === 'http') {
    // Uses only `dbs.name`: the local:http variant runs it on a local database.
    test(`${P} 3955 race condition in put`, async () => {
      const { db } = await open('3955');
      const srcdata = ['AAA'.repeat(50), 'BBB'.repeat(50), 'CCC'.repeat(50)];
      const doc: any = {
        _id: 'x', type: 'testdoc',
        _attachments: {
          'a.txt': { content_type: 'text/plain', data: btoa(srcdata[0]!) },
          'b.txt': { content_type: 'text/plain', data: btoa(srcdata[1]!) },
          'c.txt': { content_type: 'text/plain', data: btoa(srcdata[2]!) },
          'zzz.txt': { content_type: 'text/plain', data: btoa('ZZZ') },
        },
      };
      const put = db.put(doc);
      // Changed while the put is under way: the saved revision must not see it.
      doc._attachments['c.txt'].data = btoa('ZZZ');
      doc._attachments['b.txt'].data = btoa('ZZZ');
      await put;
      const saved = await db.get('x');
      const digests = Object.values<any>(saved._attachments).map((a) => a.digest);
      assert.equal(new Set(digests).size, digests.length, `digests are not unique: ${JSON.stringify(digests)}`);
    });
  }
}
