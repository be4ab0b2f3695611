package scheduler

// A test written from a mutant scripts/mutation.sh found alive in
// apptype.go (docs/testing.md, "Mutation testing").

import "testing"

// TestAppTypeFromTheClassName: the type is guessed from the class name
// without its package: a package named like a type does not count, and a
// name that is all class (no package, or a bare leading dot) is read whole.
func TestAppTypeFromTheClassName(t *testing.T) {
	for _, c := range []struct{ class, want string }{
		{"org.apache.spark.examples.JavaWordCount", "wordcount"},
		{"com.pagerank.tools.Loader", ""},
		{"com.sort.Sorter", "sort"},
		{"SparkPageRank", "pagerank"},
		{".SortByKey", "sort"},
	} {
		j := mkJob("j", 1, 1)
		j.App.MainClass = c.class
		if got := AppType(&j); got != c.want {
			t.Errorf("AppType(%q) = %q, want %q", c.class, got, c.want)
		}
	}
}
