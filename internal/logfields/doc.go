// Package logfields holds the product's structured log field names to one
// convention: snake_case ("avoid_until", "agent_id"), so that a log search
// for a field finds it whatever package logged it. Its test parses every
// non-test Go file of the module for logrus.Fields keys and WithField
// names. Test-only: it has no code and imports nothing of sparkpack.
package logfields
