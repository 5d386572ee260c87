// Package zaplog bridges zap into the Temporal SDK's logger interface, so
// workflow, activity and SDK logs all go through one zap core.
package zaplog

import (
	"go.temporal.io/sdk/log"
	"go.uber.org/zap"
)

// Logger is a Temporal log.Logger writing to zap.
type Logger struct {
	z *zap.SugaredLogger
}

var _ log.WithLogger = Logger{}

// New wraps z.
func New(z *zap.Logger) Logger {
	return Logger{z: z.WithOptions(zap.AddCallerSkip(1)).Sugar()}
}

func (l Logger) Debug(msg string, keyvals ...any) { l.z.Debugw(msg, keyvals...) }
func (l Logger) Info(msg string, keyvals ...any)  { l.z.Infow(msg, keyvals...) }
func (l Logger) Warn(msg string, keyvals ...any)  { l.z.Warnw(msg, keyvals...) }
func (l Logger) Error(msg string, keyvals ...any) { l.z.Errorw(msg, keyvals...) }

// With returns a logger that adds keyvals to every entry.
func (l Logger) With(keyvals ...any) log.Logger { return Logger{z: l.z.With(keyvals...)} }
