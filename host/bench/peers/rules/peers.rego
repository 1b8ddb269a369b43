package toolwarden.peers

# The rule the peer benchmark decides in every engine, first match wins:
#   arguments.path under /etc/            -> deny  (argguard's deny_glob /etc/**)
#   destructiveHint true or absent        -> ask   (toolwarden's auto mode)
#   otherwise                             -> allow

destructive := object.get(input, ["annotations", "destructiveHint"], true)

path := object.get(input, ["arguments", "path"], "")

decision := {"decision": "deny", "reason": "arg_denied"} if {
	is_string(path)
	startswith(path, "/etc/")
} else := {"decision": "ask", "reason": "destructive"} if {
	destructive != false
} else := {"decision": "allow", "reason": "safe"}
