// Package strictjson finds what encoding/json silently repairs or drops in
// a request body: strings that are not valid UTF-8 (decoded as U+FFFD),
// escaped lone UTF-16 surrogates such as "\ud800" (also decoded as
// U+FFFD), and object keys given twice (the last one wins). Both of
// sparkpack's front ends (the native REST API through
// scheduler.DecodeSpec, and Spark's REST submission protocol in package
// sparkrest) run Check before decoding, so such bodies are refused with the
// path of the field instead of being stored altered.
//
// It is a scanner, not a decoder: syntax errors are left to encoding/json.
// It imports only the standard library and must stay that way.
package strictjson
