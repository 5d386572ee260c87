package workflows

import (
	"context"
	"reflect"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/bookingsaga/bookingsaga/booking"
)

// storeReads answers the store reads no mock of the test expects from
// storeHolds. Like failUnmocked, it must come after the test's own mocks.
func (f *fixture) storeReads() {
	f.env.OnActivity(f.a.Lookup, mock.Anything, mock.MatchedBy(func(in booking.KeyInput) bool {
		_, ok := f.held(in.RequestKey)
		return ok
	})).Return(func(_ context.Context, in booking.KeyInput) (booking.LookupOutput, error) {
		b, _ := f.held(in.RequestKey)
		return booking.LookupOutput{Found: true, Booking: b}, nil
	}).Maybe()
}

// failUnmocked answers every activity call no mock of the test expects:
// the call fails the test by name, and the saga hears a non-retryable
// error. Without it such a call ran the real activity over a nil store,
// which panicked and was retried until the test's wall-clock timeout,
// and the name was lost in the timeout's stack.
//
// It must run after the test's own mocks: testify answers with the first
// expectation that matches, so these come last.
func (f *fixture) failUnmocked() {
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	errType := reflect.TypeOf((*error)(nil)).Elem()
	v := reflect.ValueOf(f.a)
	for i := 0; i < v.NumMethod(); i++ {
		name, fn := v.Type().Method(i).Name, v.Method(i).Type()
		if fn.NumIn() != 2 || fn.In(0) != ctxType || fn.NumOut() == 0 || fn.Out(fn.NumOut()-1) != errType {
			continue
		}
		answer := reflect.MakeFunc(fn, func([]reflect.Value) []reflect.Value {
			f.t.Errorf("activity %s ran with no mock expecting the call", name)
			out := make([]reflect.Value, fn.NumOut())
			for j := range fn.NumOut() - 1 {
				out[j] = reflect.Zero(fn.Out(j))
			}
			err := temporal.NewNonRetryableApplicationError("unmocked activity "+name, "Unmocked", nil)
			out[len(out)-1] = reflect.ValueOf(&err).Elem()
			return out
		})
		f.env.OnActivity(name, mock.Anything, mock.Anything).Return(answer.Interface()).Maybe()
	}
}
