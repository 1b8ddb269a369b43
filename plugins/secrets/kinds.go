package secrets

// Kind is one kind of secret the scanner knows. Kinds are bits of a mask,
// in the order the labels and reasons list them: built-in kinds first,
// then the config's prefixes in config order.
type Kind uint8

// The built-in kinds. Their names are label suffixes
// (secret_seen:<name>) and config names (disable = ["jwt"]).
const (
	AWSAccessKey Kind = iota
	AWSSecretKey
	GCPServiceAccount
	AzureStorageKey
	GitHubToken
	SlackToken
	SlackWebhook
	PrivateKey
	JWT
	StripeKey
	OpenAIKey
	AnthropicKey
	NamedSecret
	builtinKinds
)

// maxPrefixes bounds config prefixes so that every label of one observe
// fits the ABI's 32 (secret_seen, 13 built-in kinds, 16 prefixes).
const maxPrefixes = 16

var kindNames = [builtinKinds]string{
	"aws_access_key", "aws_secret_key", "gcp_service_account", "azure_storage_key", "github_token",
	"slack_token", "slack_webhook", "private_key", "jwt", "stripe_key", "openai_key", "anthropic_key",
	"named_secret",
}

// kindText names a kind in a reason, with its article.
var kindText = [builtinKinds]string{
	"an AWS access key id", "an AWS secret access key", "a GCP service-account private key",
	"an Azure storage or service key", "a GitHub token", "a Slack token", "a Slack webhook URL",
	"a private key", "a JSON Web Token", "a Stripe live key", "an OpenAI API key", "an Anthropic API key",
	"a high-entropy value named like a secret",
}

// Labels and codes.
const (
	// LabelSeen marks a session that has seen a secret; a kind-specific
	// label, LabelSeen + ":" + kind, says which.
	LabelSeen = "secret_seen"
	// CodeArguments: the call's arguments carry a secret.
	CodeArguments = "secret_in_arguments"
	// CodeSession: the session has seen a secret.
	CodeSession = "secret_in_session"
)
