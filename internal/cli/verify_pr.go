package cli

import (
	"context"
	"errors"
)

type prHead struct{ Head, Base, Body string }

func prToVerify(ctx context.Context, stdio Stdio, o *verifyOpts) (*prHead, error) {
	return nil, errors.New("todo")
}
