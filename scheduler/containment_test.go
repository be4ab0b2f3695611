package scheduler

import (
	"errors"
	"strings"
	"testing"
)

func containedSpec(conf, env map[string]string) Spec {
	return Spec{Name: "j", App: App{AppResource: "local:///opt/app.jar", MainClass: "org.example.Main", SparkConf: conf, Environment: env},
		Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024}
}

func TestContainmentRefusesLaunchSettings(t *testing.T) {
	for _, c := range []struct {
		name      string
		conf, env map[string]string
		field     string // "" accepted
		names     string // named in the message
	}{
		{"harmless conf and env", map[string]string{"spark.eventLog.enabled": "true", "spark.sql.shuffle.partitions": "8", "spark.jars": "local:///x.jar"},
			map[string]string{"SPARK_LOCAL_DIRS": "/tmp", "TZ": "UTC", "MESOS_SANDBOX_X": "y"}, "", ""},
		{"principal", map[string]string{"spark.mesos.principal": "root"}, nil, "app.sparkConf", "spark.mesos.principal"},
		{"secret", map[string]string{"spark.mesos.secret": "s"}, nil, "app.sparkConf", "spark.mesos.secret"},
		{"secret file", map[string]string{"spark.mesos.secret.file": "/etc/s"}, nil, "app.sparkConf", "spark.mesos.secret.file"},
		{"docker image", map[string]string{"spark.mesos.executor.docker.image": "evil"}, nil, "app.sparkConf", "spark.mesos.executor.docker.image"},
		{"docker parameters", map[string]string{"spark.mesos.executor.docker.parameters": "privileged=true"}, nil, "app.sparkConf", "spark.mesos.executor.docker.parameters"},
		{"docker volumes", map[string]string{"spark.mesos.executor.docker.volumes": "/:/host:rw"}, nil, "app.sparkConf", "spark.mesos.executor.docker.volumes"},
		{"executor home", map[string]string{"spark.mesos.executor.home": "/tmp/spark"}, nil, "app.sparkConf", "spark.mesos.executor.home"},
		{"uris", map[string]string{"spark.mesos.uris": "http://x/y"}, nil, "app.sparkConf", "spark.mesos.uris"},
		{"framework id", map[string]string{"spark.mesos.driver.frameworkId": "abc-0001"}, nil, "app.sparkConf", "spark.mesos.driver.frameworkId"},
		{"executor uri", map[string]string{"spark.executor.uri": "http://x/spark.tgz"}, nil, "app.sparkConf", "spark.executor.uri"},
		{"driver java options", map[string]string{"spark.driver.extraJavaOptions": "-Dspark.mesos.role=*"}, nil, "app.sparkConf", "spark.driver.extraJavaOptions"},
		{"executor java options", map[string]string{"spark.executor.extraJavaOptions": "-javaagent:/x.jar"}, nil, "app.sparkConf", "spark.executor.extraJavaOptions"},
		{"library path", map[string]string{"spark.driver.extraLibraryPath": "/tmp"}, nil, "app.sparkConf", "spark.driver.extraLibraryPath"},
		{"driver secrets", map[string]string{"spark.mesos.driver.secret.names": "db"}, nil, "app.sparkConf", "spark.mesos.driver.secret.names"},
		{"executor env LD_PRELOAD", map[string]string{"spark.executorEnv.LD_PRELOAD": "/x.so"}, nil, "app.sparkConf", "spark.executorEnv.LD_PRELOAD"},
		{"executor env harmless", map[string]string{"spark.executorEnv.TZ": "UTC"}, nil, "", ""},
		{"extra cores", map[string]string{"spark.mesos.extra.cores": "8"}, nil, "app.sparkConf", "spark.mesos.extra.cores"},
		{"SPARK_HOME", nil, map[string]string{"SPARK_HOME": "/tmp/spark"}, "app.environment", "SPARK_HOME"},
		{"SPARK_CONF_DIR", nil, map[string]string{"SPARK_CONF_DIR": "/tmp"}, "app.environment", "SPARK_CONF_DIR"},
		{"SPARK_SUBMIT_OPTS", nil, map[string]string{"SPARK_SUBMIT_OPTS": "-Dspark.mesos.role=*"}, "app.environment", "SPARK_SUBMIT_OPTS"},
		{"JAVA_TOOL_OPTIONS", nil, map[string]string{"JAVA_TOOL_OPTIONS": "-Dspark.cores.max=64"}, "app.environment", "JAVA_TOOL_OPTIONS"},
		{"LD_PRELOAD", nil, map[string]string{"LD_PRELOAD": "/x.so"}, "app.environment", "LD_PRELOAD"},
		{"LD_LIBRARY_PATH", nil, map[string]string{"LD_LIBRARY_PATH": "/x"}, "app.environment", "LD_LIBRARY_PATH"},
		{"PATH", nil, map[string]string{"PATH": "/tmp"}, "app.environment", "PATH"},
		{"BASH_ENV", nil, map[string]string{"BASH_ENV": "/tmp/x"}, "app.environment", "BASH_ENV"},
		{"SPARK_USER", nil, map[string]string{"SPARK_USER": "root"}, "app.environment", "SPARK_USER"},
		{"LIBPROCESS", nil, map[string]string{"LIBPROCESS_SSL_ENABLED": "false"}, "app.environment", "LIBPROCESS_SSL_ENABLED"},
		{"first in order", map[string]string{"spark.mesos.uris": "x", "spark.mesos.principal": "p"}, nil, "app.sparkConf", "spark.mesos.principal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := containedSpec(c.conf, c.env)
			if err := s.Validate(); err != nil {
				t.Fatalf("Validate: %v (the containment is a separate check)", err)
			}
			err := Containment{}.Check(&s)
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Fatalf("Check = %v, want an error on %s", err, c.field)
			}
			flag := "--allow-spark-conf " + c.names
			if c.field == "app.environment" {
				flag = "--allow-env " + c.names
			}
			if !strings.Contains(fe.Msg, c.names) || !strings.Contains(fe.Msg, flag) {
				t.Errorf("message %q should name %s and say how to allow it (%s)", fe.Msg, c.names, flag)
			}
			// Allowed by name, it passes.
			var conf, env []string
			if c.field == "app.environment" {
				env = []string{c.names}
			} else {
				conf = []string{c.names}
			}
			pol, err := NewContainment(conf, env)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.conf)+len(c.env) == 1 {
				if err := pol.Check(&s); err != nil {
					t.Errorf("allowed by name, still refused: %v", err)
				}
			}
		})
	}
}

func TestNewContainmentRefusesNamesThatNeedNoAllowing(t *testing.T) {
	for _, c := range []struct {
		conf, env []string
		want      string
	}{
		{[]string{"spark.mesos.role"}, nil, "sparkpack sets this property itself"},
		{[]string{"spark.cores.max"}, nil, "sparkpack sets this property itself"},
		{[]string{"spark.eventLog.enabled"}, nil, "may set this property already"},
		{[]string{"spark.mesos.princpal"}, nil, "may set this property already"},
		{nil, []string{"SPARK_LOCAL_DIRS"}, "may set this variable already"},
	} {
		if _, err := NewContainment(c.conf, c.env); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewContainment(%v, %v) = %v, want an error saying %q", c.conf, c.env, err, c.want)
		}
	}
	if _, err := NewContainment([]string{"", " spark.mesos.executor.docker.image "}, []string{"LD_PRELOAD", ""}); err != nil {
		t.Errorf("blank entries and spaces: %v", err)
	}
}

func TestLauncherMainClassesRefused(t *testing.T) {
	for _, class := range []string{
		"org.apache.spark.deploy.SparkSubmit", "org.apache.spark.deploy.SparkSubmit$", "ORG.apache.spark.deploy.sparksubmit",
		"org.apache.spark.api.python.PythonGatewayServer", "org.apache.spark.api.r.RBackend",
		"org.apache.spark.launcher.Main", "org.apache.spark.deploy.Client", "org.apache.spark.deploy.ClientApp",
		"org.apache.spark.deploy.rest.RestSubmissionClientApp", "org.apache.spark.deploy.master.Master",
		"org.apache.spark.deploy.worker.Worker", "org.apache.spark.deploy.worker.DriverWrapper",
		"org.apache.spark.deploy.mesos.MesosClusterDispatcher", "org.apache.spark.deploy.history.HistoryServer",
		"org.apache.spark.deploy.PythonRunner", "org.apache.spark.deploy.SomethingNew",
		"org.apache.spark.executor.CoarseGrainedExecutorBackend", "org.apache.spark.repl.Main$",
		"org.apache.spark.sql.hive.thriftserver.SparkSQLCLIDriver",
	} {
		s := containedSpec(nil, nil)
		s.App.MainClass = class
		var fe *FieldError
		if err := s.Validate(); !errors.As(err, &fe) || fe.Field != "app.mainClass" {
			t.Errorf("%s: Validate = %v, want an error on app.mainClass", class, err)
		}
		if err := s.CheckCommandValues(); err == nil {
			t.Errorf("%s: CheckCommandValues accepted it", class)
		}
	}
	for _, class := range []string{"org.apache.spark.examples.SparkPi", "org.apache.spark.examples.JavaWordCount",
		"com.example.deploy.SparkSubmitter", "org.apache.spark.sql.SomeJob"} {
		s := containedSpec(nil, nil)
		s.App.MainClass = class
		if err := s.Validate(); err != nil {
			t.Errorf("%s refused: %v", class, err)
		}
	}
}
