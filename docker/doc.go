// Package docker holds sparkpack's container image (Dockerfile) and its
// docker-compose deployment on a real Apache Mesos cluster
// (docker-compose.yml, .env, mesos/, sparkpack/tokens). It has no Go code of its own: its
// tests check those files where no Docker engine runs, inside `make test`:
//
//   - TestComposeConfig: `docker-compose config -q` accepts the stack, and
//     the resolved configuration has what docs/deploy.md promises (pinned
//     images, ZooKeeper, a Mesos master with ACLs and credentials, three or
//     more agents with different sizes and instance_type / price / location
//     attributes, PostgreSQL on a named volume, sparkpack pointed at both,
//     Spark 3.5 on every agent).
//   - TestDockerfileLint: a scripted lint of the Dockerfile (hadolint cannot
//     be installed here: it is a Haskell binary that even npm's "hadolint"
//     wrapper downloads from GitHub releases). The rules are listed there.
//   - TestMesosConfig: the ACL and credential files parse, the secret files
//     match the credentials, and the ACLs grant sparkpack what it needs.
//   - TestComposeSecurity: TLS (the certs service, sparkpack's API over
//     TLS, https to the master with the generated CA, libprocess TLS on the
//     master and agents), the tokens file parses, the Spark REST allowlist
//     stays inside the compose network, every SPARKPACK_* variable is one
//     serve reads.
//   - TestSparkSubmitUsesSpark35Options: the spark-submit command sparkpack
//     builds (package sparksubmit) uses only options and properties that
//     exist in Spark 3.5.
//
// TestDeployStack (deploy_test.go, build tag deploytest) is not part of
// `make test`: `make test-deploy` (scripts/deploy-test.sh) builds the images
// locally (scripts/build-images.sh, docker/local/), brings the stack up with
// a Docker engine and runs it against the running stack (docs/deploy.md,
// "Try it on one machine").
//
// See docs/deploy.md for using the deployment.
package docker
