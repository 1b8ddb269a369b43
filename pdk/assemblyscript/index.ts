// The package entry: "@toolwarden/pdk" resolves here (AssemblyScript looks
// for index.ts at the package root).
export * from "./assembly/index";
