package slurm

import (
	"errors"
	"log/slog"

	"github.com/slurmbench/slurmbench/slurm/token"
)

// ErrNoToken means no token source was configured.
var ErrNoToken = token.ErrNoToken

// tokenError is a failure to obtain a token: no request was sent.
type tokenError struct{ err error }

func (e *tokenError) Error() string { return e.err.Error() }
func (e *tokenError) Unwrap() error { return e.err }

// IsTokenError reports whether err is a failure to obtain a token (the
// token file or command failed), as opposed to the server refusing one.
func IsTokenError(err error) bool {
	var te *tokenError
	return errors.As(err, &te) || errors.Is(err, ErrNoToken)
}

// newTokenSource is cfg's token source (package token).
func newTokenSource(cfg Config, log *slog.Logger) (*token.Source, error) {
	return token.New(token.Options{Token: cfg.Token, File: cfg.TokenFile, Command: cfg.TokenCommand, Dir: cfg.TokenCommandDir, Timeout: cfg.TokenCommandTimeout}, log)
}
