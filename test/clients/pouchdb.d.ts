// pouchdb 9 ships no type declarations and @types/pouchdb is not installed: it is used untyped.
declare module 'pouchdb' {
  const PouchDB: any;
  export default PouchDB;
}

// pouchdb-find (the Mango plugin) ships no declarations either.
declare module 'pouchdb-find' {
  const plugin: any;
  export default plugin;
}
