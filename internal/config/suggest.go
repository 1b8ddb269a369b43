package config

import (
	"strings"
)

// suggest returns the candidate the user most likely meant by word, or ""
// when none is close enough to be worth saying. A candidate that differs
// only in case or in '_' and '-' (read_only_hint for readOnlyHint) wins
// outright; otherwise the nearest by edit distance (with transpositions)
// within a budget that grows with the word's length, or a candidate the word
// is a clipped prefix of (bearer_token_env for bearer_token_env_var).
func suggest(word string, candidates []string) string {
	norm := normalizeKey(word)
	best, bestDist := "", 0
	for _, c := range candidates {
		if normalizeKey(c) == norm {
			return c
		}
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if best == "" || d < bestDist || d == bestDist && c < best {
			best, bestDist = c, d
		}
	}
	if best != "" && bestDist <= distanceBudget(word) {
		return best
	}
	prefixed := ""
	if len(word) >= 4 {
		for _, c := range candidates {
			if strings.HasPrefix(c, word) && (prefixed == "" || len(c) < len(prefixed)) {
				prefixed = c
			}
		}
	}
	return prefixed
}

// distanceBudget is how many edits still read as a typo: one for short
// words, about one in four characters for longer ones, never more than three.
func distanceBudget(word string) int {
	n := (len(word) + 2) / 4
	return max(1, min(3, n))
}

func normalizeKey(s string) string {
	s = strings.ToLower(s)
	return strings.NewReplacer("_", "", "-", "").Replace(s)
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent characters
// each cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rolling rows: i-2, i-1 and i.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// didYouMean formats a suggestion for the end of a message, or "".
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
		return " (did you mean " + quote(s) + "?)"
	}
	return ""
}

// Suggest returns the candidate the user most likely meant by word, or ""
// when none is close enough: the did-you-mean of config diagnostics, for
// other inputs that name keys (the CLI's call files, for one).
func Suggest(word string, candidates []string) string { return suggest(word, candidates) }
