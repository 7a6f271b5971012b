// pouchdb 9 ships no type declarations and @types/pouchdb is not installed: it is used untyped.
declare module 'pouchdb' {
  const PouchDB: any;
  export default PouchDB;
}
