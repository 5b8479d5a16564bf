// Package compose checks the repository's docker-compose.yml (a server and
// two agents) without a docker engine: it parses as YAML (anchors and
// merge keys resolved), has the services, network and volumes it promises,
// and every skiff command line in it is accepted by the real CLI (the
// runners receive the parsed configuration instead of running).
//
// # Invariants
//
//   - Nothing is started: no container, no server, no agent.
//   - A flag renamed or removed in cli, or a node address out of
//     the compose network's subnet, fails the test.
package compose
