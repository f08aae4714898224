package main

import (
	"context"
	"fmt"
)

func benchHistory(ctx context.Context, args []string) error { return fmt.Errorf("not yet") }
