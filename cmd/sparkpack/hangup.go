package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
)

// onHangup makes SIGHUP what operators expect of a daemon (systemctl
// reload): never the end of serve (its default action), and the tokens
// file read again when one is configured. The TLS pair and the teams file
// have watchers of their own that hear the same signal. A tokens file that
// no longer parses is refused with its error and the tokens in force stay.
// The returned stop ends the goroutine and gives SIGHUP back.
func onHangup(tokensFile string, tokens *api.Tokens, log logrus.FieldLogger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				reloadTokens(tokensFile, tokens, log)
			}
		}
	}()
	return func() { signal.Stop(hup); cancel(); wg.Wait() }
}

// reloadTokens reads the tokens file again into tokens (nothing to do
// without a file: tokens from SPARKPACK_TOKENS come from the environment,
// which a signal cannot change).
func reloadTokens(file string, tokens *api.Tokens, log logrus.FieldLogger) {
	if file == "" || tokens == nil {
		log.Info("SIGHUP: no tokens file to read again (--tokens-file unset)")
		return
	}
	n, err := api.LoadTokens(file, "")
	if err != nil {
		log.WithError(err).Error("SIGHUP: the tokens file was not reloaded; the tokens in force stay: fix the file and send SIGHUP again")
		return
	}
	tokens.Replace(n)
	for _, w := range n.Warnings() {
		log.Warn(w)
	}
	log.WithField("tokens", n.Names()).Info("SIGHUP: tokens file reloaded")
}
