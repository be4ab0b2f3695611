#!/usr/bin/env bash
# aws-ec2.sh — a power program for sparkpack's exec provider: stops and
# starts the EC2 instance of a Mesos agent.
#
#   sparkpack serve --power-off-after 10m --power-provider exec \
#       --power-exec /etc/sparkpack/aws-ec2.sh --power-selector location=cloud
#
# sparkpack runs it as: aws-ec2.sh on|off AGENT_ID HOSTNAME, with the agent's
# Mesos attributes in SPARKPACK_AGENT_ATTR_<NAME>. The instance id comes from
# the agent attribute instance_id (start agents with
# --attributes='instance_id:i-0abc...;price:0.192;location:cloud'), else from
# the hostname through describe-instances. Needs the AWS CLI and
# credentials allowed ec2:StopInstances, ec2:StartInstances and
# ec2:DescribeInstances. Stopping a stopped instance or starting a running one
# succeeds, as sparkpack requires. The agent's work dir must survive a stop
# (an EBS root volume) so that it registers again with the same agent id.
set -euo pipefail
action=${1:?usage: aws-ec2.sh on|off AGENT_ID HOSTNAME}
agent=${2:?agent id missing}
host=${3:-}
region_args=()
[ -n "${AWS_REGION:-}" ] && region_args=(--region "$AWS_REGION")

id=${SPARKPACK_AGENT_ATTR_INSTANCE_ID:-}
if [ -z "$id" ]; then
  [ -n "$host" ] || { echo "agent $agent has no instance_id attribute and no hostname" >&2; exit 2; }
  id=$(aws "${region_args[@]}" ec2 describe-instances \
        --filters "Name=private-dns-name,Values=$host" \
        --query 'Reservations[].Instances[].InstanceId' --output text)
  [ -n "$id" ] && [ "$id" != None ] || { echo "no EC2 instance has the private DNS name $host (agent $agent)" >&2; exit 2; }
fi
case "$action" in
  off) aws "${region_args[@]}" ec2 stop-instances --instance-ids "$id" --output text >/dev/null ;;
  on)  aws "${region_args[@]}" ec2 start-instances --instance-ids "$id" --output text >/dev/null ;;
  *)   echo "unknown action $action (on or off)" >&2; exit 2 ;;
esac
echo "ec2 $action requested for $id (agent $agent)"
