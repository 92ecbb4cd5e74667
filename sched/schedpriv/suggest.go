package schedpriv

import "strings"

// closest returns the known name nearest to an unknown one, or "" when
// none is near enough to be a likely typo. An admin who wrote
// round_robbin or strict_fifo_ is told the name they meant instead of
// being left to search the documentation.
//
// Names are compared without regard to case (By_Queue suggests by_queue)
// by edit distance counting an insertion, a deletion, a change or a swap
// of two neighbouring letters as one edit. A name is near enough within
// one edit per five letters of the unknown name, plus one; ties go to the
// earlier name in known, so the answer does not depend on map order.
func closest(name string, known []string) string {
	if len(name) > maxSuggestLen {
		return "" // no known name is anywhere near that long
	}
	limit := 1 + len(name)/5
	best, bestD := "", limit+1
	lower := strings.ToLower(name)
	for _, k := range known {
		if d := editDistance(lower, strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// maxSuggestLen bounds the names closest compares, keeping a garbage
// line's cost small: known names are under 40 letters.
const maxSuggestLen = 64

// editDistance is the optimal string alignment distance between a and b
// (Levenshtein plus adjacent transpositions), on bytes: option and sort
// names are ASCII.
func editDistance(a, b string) int {
	// Three rows: two back for transpositions, the previous and the current.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
