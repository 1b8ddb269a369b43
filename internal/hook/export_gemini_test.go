package hook

// GeminiValidName is Gemini CLI's name for tool of server, for the tests.
var GeminiValidName = geminiValidName
