#!/usr/bin/env bash
# aws-asg.sh — a power program for sparkpack's exec provider, for agents in
# an EC2 Auto Scaling group: the instance is put in Standby (out of the
# group's capacity, so the group does not replace it) and stopped; powering
# on starts it and takes it out of Standby. The same instance comes back, so
# the Mesos agent keeps its id.
#
#   sparkpack serve --power-off-after 10m --power-provider exec \
#       --power-exec /etc/sparkpack/aws-asg.sh --power-exec-arg spark-agents
#
# sparkpack runs it as: aws-asg.sh GROUP on|off AGENT_ID HOSTNAME (GROUP from
# --power-exec-arg). The instance id comes from the agent attribute
# instance_id. Needs the AWS CLI and credentials allowed
# autoscaling:EnterStandby, autoscaling:ExitStandby, ec2:StopInstances,
# ec2:StartInstances and ec2:DescribeInstances; the group's minimum size
# must allow the standby.
set -euo pipefail
group=${1:?usage: aws-asg.sh GROUP on|off AGENT_ID HOSTNAME}
action=${2:?action missing}
agent=${3:?agent id missing}
id=${SPARKPACK_AGENT_ATTR_INSTANCE_ID:?agent $agent has no instance_id attribute (start the agent with --attributes=instance_id:i-...)}
region_args=()
[ -n "${AWS_REGION:-}" ] && region_args=(--region "$AWS_REGION")
state() {
  aws "${region_args[@]}" autoscaling describe-auto-scaling-instances --instance-ids "$id" \
    --query 'AutoScalingInstances[0].LifecycleState' --output text
}
case "$action" in
  off)
    if [ "$(state)" = InService ]; then
      aws "${region_args[@]}" autoscaling enter-standby --auto-scaling-group-name "$group" \
        --instance-ids "$id" --should-decrement-desired-capacity --output text >/dev/null
    fi
    aws "${region_args[@]}" ec2 stop-instances --instance-ids "$id" --output text >/dev/null ;;
  on)
    aws "${region_args[@]}" ec2 start-instances --instance-ids "$id" --output text >/dev/null
    if [ "$(state)" = Standby ]; then
      aws "${region_args[@]}" autoscaling exit-standby --auto-scaling-group-name "$group" \
        --instance-ids "$id" --output text >/dev/null
    fi ;;
  *) echo "unknown action $action (on or off)" >&2; exit 2 ;;
esac
echo "asg $group: $action requested for $id (agent $agent)"
