package scheduler

// Hand-written matchers for the patterns every submission is checked
// against. They accept exactly what the regular expressions beside them
// do (match_test.go checks that against the expressions) at a fraction of
// the cost: at thousands of submissions a second the regexp engine was a
// visible part of serve's cpu.

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// IsUUID reports whether s is a UUID in its textual form (either case): it
// matches ^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// isJavaClass matches ^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$.
func isJavaClass(s string) bool {
	start := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if start {
				return false
			}
			start = true
		case isLetter(c) || c == '_' || c == '$':
			start = false
		case isDigit(c):
			if start {
				return false
			}
		default:
			return false
		}
	}
	return !start
}

// isScheme matches ^[A-Za-z][A-Za-z0-9+.-]*$.
func isScheme(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(isLetter(c) || isDigit(c) || c == '+' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
