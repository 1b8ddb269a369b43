package instrument

// Version names what Module writes. It is part of the name under which a
// host keeps an instrumented module on disk, so it must change whenever
// Module's output for some input does (TestVersionNamesTheOutput says when).
const Version = "2"
