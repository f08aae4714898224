package agentclient

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agentapi"
)

// CheckSearchAttributes reports whether the namespace has the agent search
// attributes with the right types. Runs upsert them only when it does:
// an unknown search attribute would fail their workflow tasks. The error
// says how to register what is missing.
func CheckSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	var missing []string
	for name, typ := range agentapi.SearchAttributes {
		have, ok := resp.GetCustomAttributes()[name]
		// The API names types INDEXED_VALUE_TYPE_KEYWORD, the CLI Keyword.
		if !ok || !strings.EqualFold(strings.TrimPrefix(have.String(), "INDEXED_VALUE_TYPE_"), typ) {
			missing = append(missing, fmt.Sprintf("--name %s --type %s", name, typ))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return fmt.Errorf("search attributes missing; register them with `temporal operator search-attribute create %s`",
		strings.Join(missing, " "))
}
