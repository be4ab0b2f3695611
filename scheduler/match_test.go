package scheduler

import (
	"math/rand"
	"regexp"
	"testing"
)

// The hand-written matchers agree with the regular expressions they
// replace, on hand-picked strings and on random strings built from the
// characters that matter.
func TestMatchersAgreeWithTheirExpressions(t *testing.T) {
	cases := []struct {
		name  string
		re    *regexp.Regexp
		match func(string) bool
		seeds []string
		alpha string
	}{
		{"uuid", regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`), IsUUID,
			[]string{"", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", "6F1D2C1E-8A7B-4C1D-9E2F-3A4B5C6D7E8F", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8g", "6f1d2c1e18a7b-4c1d-9e2f-3a4b5c6d7e8f", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f\n"},
			"0123456789abcdefABCDEFg-x"},
		{"class", regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$`), isJavaClass,
			[]string{"", "a", "a.B", "org.apache.spark.examples.SparkPi", "a..b", ".a", "a.", "1a", "a.1b", "a1.b2", "$x._y", "a b", "a.b\n", "é"},
			"aZ_$09.-é "},
		{"scheme", regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`), isScheme,
			[]string{"", "s3a", "hdfs", "1x", "a+b.c-d", "a_b", "x:", "A9"},
			"aZ09+.-_:"},
	}
	rng := rand.New(rand.NewSource(1))
	for _, c := range cases {
		check := func(s string) {
			if got, want := c.match(s), c.re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, the expression says %v", c.name, s, got, want)
			}
		}
		for _, s := range c.seeds {
			check(s)
		}
		alpha := []rune(c.alpha)
		for i := 0; i < 20000; i++ {
			n := rng.Intn(40)
			if c.name == "uuid" && i%2 == 0 {
				n = 36 // right length, random content: exercises the positions
			}
			b := make([]rune, n)
			for k := range b {
				b[k] = alpha[rng.Intn(len(alpha))]
				if c.name == "uuid" && (k == 8 || k == 13 || k == 18 || k == 23) && rng.Intn(4) > 0 {
					b[k] = '-'
				}
			}
			check(string(b))
		}
	}
}
