package agentloop

import _ "embed"

// ComposeFile is docker-compose.yml.
//
//go:embed docker-compose.yml
var ComposeFile []byte

// DynamicConfig is deploy/dynamicconfig.yaml, the Temporal server's
// dynamic config; DynamicConfigPath is its path in the repository.
//
//go:embed deploy/dynamicconfig.yaml
var DynamicConfig []byte

const DynamicConfigPath = "deploy/dynamicconfig.yaml"
