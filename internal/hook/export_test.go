package hook

// StripCommentsForTest exposes stripComments to the fuzz test.
var StripCommentsForTest = stripComments
