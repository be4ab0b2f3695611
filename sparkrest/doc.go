// Package sparkrest serves the REST submission protocol of Spark's
// MesosClusterDispatcher (protocol version v1) on its own listener, so that
//
//	spark-submit --master mesos://sparkpack:7077 --deploy-mode cluster ...
//
// submits a sparkpack job without any change to the client. Spark's
// RestSubmissionClient (Spark 3.5) speaks it:
//
//	POST /v1/submissions/create        CreateSubmissionRequest -> CreateSubmissionResponse
//	GET  /v1/submissions/status/{id}   -> SubmissionStatusResponse
//	POST /v1/submissions/kill/{id}     -> KillSubmissionResponse
//
// Status codes follow Spark's RestSubmissionServer: 200 whenever the request
// was processed (even when the answer says "success": false, e.g. an unknown
// submission), 400 with an ErrorResponse for a malformed or invalid request,
// 468 with an ErrorResponse naming "highestProtocolVersion": "v1" for another
// protocol version, 503 with Retry-After and an ErrorResponse when the
// database is unavailable (retrying a create is safe only with
// spark.sparkpack.id, see below), 500 with an ErrorResponse when sparkpack
// itself fails otherwise. A wrong HTTP method gets 405.
//
// Spark 3.5's RestSubmissionClient has no retryable status: readResponse
// turns every status but 200 into an ErrorResponse whose message it logs
// (a 500 whose Content-Type is not JSON is thrown as a protocol error
// instead), createSubmission never retries (SPARK-6443), and only a
// connection failure (refused, reset, no answer in 10 s) moves it to the
// next master of a spark:// list — a mesos:// master is a single address.
// So spark-submit prints "Server responded with error: Service
// unavailable: ..." and the user submits again; 503 and Retry-After serve
// the clients, proxies and load balancers that do retry.
//
// Responses hold only the fields Spark's response classes have: the client
// parses them with Jackson, which rejects unknown properties, so sparkpack's
// own state is reported inside "message".
//
// # From Spark properties to the job
//
//	spark.app.name                        name (default: the main class, as the dispatcher does)
//	spark.executor.instances              executors
//	spark.cores.max                       caps executors at floor(cores.max / executor cores)
//	spark.executor.cores                  executorCores (default 1)
//	spark.executor.memory                 executorMemoryMB (Spark size string: 4g, 512m, 1024; default 1g)
//	spark.mesos.executor.memoryOverhead   memoryOverheadMB (MiB, Spark on Mesos' own setting; wins)
//	spark.executor.memoryOverhead         memoryOverheadMB (size string, MiB by default)
//	spark.driver.cores                    driver.cores
//	spark.driver.memory                   driver.memoryMB (size string)
//	spark.sparkpack.deadline              deadline: RFC 3339 time or seconds from submission
//	spark.sparkpack.id                    id: a UUID chosen by the client (idempotent retries)
//	spark.sparkpack.estimatedDurationSeconds  estimatedDurationSeconds
//	spark.sparkpack.label.KEY             labels[KEY]
//	spark.sparkpack.notBefore             notBefore: RFC 3339 time, the earliest start
//
// The sparkpack settings carry the "spark." prefix because spark-submit
// drops every --conf key that does not start with "spark." ("Ignoring
// non-Spark config property"); the bare forms (sparkpack.deadline, ...) are
// accepted too, for clients that post the JSON themselves.
//
// Without spark.executor.instances and spark.cores.max the job gets
// Config.DefaultExecutors executors (1 unless configured) and the response
// message says so.
//
// Properties Spark's client always sends and that sparkpack controls are
// dropped: spark.master (the dispatcher's address, not the Mesos master),
// spark.submit.deployMode ("cluster"; sparkpack runs drivers in client mode
// on an agent) and spark.app.name (it becomes the job name, passed with
// --name). spark.driver.supervise=true (spark-submit --supervise) becomes
// the job's retries: a failed driver is launched again up to
// SuperviseRetries times, or spark.sparkpack.retries times when that is
// set (0-10); the response message says so. spark.jars
// loses the application resource, which spark-submit adds to it and which
// sparkpack passes as the primary resource (Spark's own dispatcher drops
// spark.jars for the same reason); other jars stay. An empty
// spark.submit.pyFiles and spark.dynamicAllocation.enabled=false are
// dropped as no-ops. Every other property goes to the job's sparkConf, where
// scheduler.Validate applies the same checks as the native API: a property
// sparkpack derives (spark.mesos.role, spark.dynamicAllocation.enabled=true,
// ...) is refused with a 400 naming it.
//
// environmentVariables (the client forwards its SPARK_* and MESOS_*
// variables) become the job's environment, except those that choose how
// the driver is launched (scheduler.LaunchEnvReason: MESOS_NATIVE_JAVA_LIBRARY,
// SPARK_SUBMIT_OPTS, ...), which are dropped unless the operator allows
// them (Config.Containment, serve --allow-env), and named in the answer's
// message: the client sends them from its own environment unasked, so
// refusing them would refuse ordinary spark-submit runs. Spark properties
// and main classes that change the launch are refused (400), as by the
// native API. appArgs become the job's arguments.
//
// # Submission ids and idempotency
//
// The submission id is the sparkpack job id (a UUID), so the same id works
// with GET /api/v1/jobs/{id} and the dashboard. Spark's client sends no id
// and never retries a create, so by default every create is a new job (two
// identical spark-submit runs are two jobs, as with Spark's dispatcher).
// A client that wants safe retries sets spark.sparkpack.id to a UUID: the
// same id with the same request returns the existing job ("success": true,
// message "already submitted"), the same id with another request is refused
// with a 400 — the native API's idempotency, through the same
// api.Server.Submit.
//
// A job that can never run (a deadline already past) is stored as REJECTED,
// as through the native API, and the create answers "success": false with
// its submissionId and the reason, so that spark-submit reports a failed
// submission.
//
// # Kills and logging
//
// A kill goes through Config.Cancel, the native API's own Cancel (serve
// passes (*api.Server).Cancel): the job is cancelled or durably marked
// kill-requested and the scheduler core is told, exactly as for
// DELETE /api/v1/jobs/{id}. Every request gets a request id (the client's
// X-Request-Id when it is sane, else a new one, answered in X-Request-Id)
// and logs through Config.Log with it, including what the native API's
// Submit and Cancel log for it.
//
// Request bodies are read strictly (package internal/strictjson): strings
// that are not valid UTF-8 or hold a lone surrogate escape, keys given
// twice, and a null in appArgs, sparkProperties or environmentVariables
// (decoded, it would be ""), are a 400 naming the field; so is any query
// string (Spark's client
// sends none; api.CheckQuery). The application resource, the main
// class and the name are checked as by the native API: none may make
// spark-submit read a value as one of its options.
//
// # Driver states
//
//	SUBMITTED, QUEUED, PLACING, RESERVING  QUEUED
//	LAUNCHING, RUNNING                     RUNNING
//	FINISHED                               FINISHED
//	FAILED, REJECTED                       FAILED (message gives the reason)
//	KILLED, CANCELLED                      KILLED
//	unknown id                             NOT_FOUND ("success": false)
//
// # Security
//
// The listener follows the REST API's policy (api.Guard, Config.Guard).
// With tokens configured, create needs a token with the submit scope, kill
// one with cancel (a token without admin kills only the jobs it
// submitted), status one with read under --protect-reads. Spark 3.5's
// RestSubmissionClient cannot send a token (it sends no Authorization
// header, and speaks plain http only), so a request WITHOUT Authorization
// from an address in --spark-rest-allow is admitted as "spark-rest-allow"
// (submit, kill what allowlisted clients submitted, status); a request that
// does send Authorization is judged by its token. serve refuses to start
// the listener with tokens configured and no --spark-rest-allow (the value
// "none" admits token-carrying clients only). Without tokens the listener
// is open, as Spark's own dispatcher is, except that a --spark-rest-allow
// list still limits create and kill. Refusals are ErrorResponses with
// status 401, 403 or 429 (Retry-After), whose message Spark's client
// prints. docs/deploy.md discusses the trade-off.
package sparkrest
