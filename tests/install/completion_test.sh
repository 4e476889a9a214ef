#!/usr/bin/env bash
# The bash completion lists every subcommand and every flag that `dmlgrad <subcommand> --help` shows.
set -euo pipefail
dmlgrad=$1
completion=$2
source "$completion"
[[ $(complete -p dmlgrad) == *_dmlgrad* ]] || { echo "FAIL: no completion registered"; exit 1; }
subcommands=$("$dmlgrad" --help | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}')
[[ -n $subcommands ]] || { echo "FAIL: no subcommands in --help"; exit 1; }
for sub in $subcommands; do
    offered=" $(_dmlgrad_flags "$sub") "
    # The first column of each option line: "-x,--input TEXT", "--cpu", ...
    for flag in $("$dmlgrad" "$sub" --help | grep -E '^ +-' | awk '{print $1}' | tr ',' '\n' | sort -u); do
        [[ $offered == *" $flag "* ]] || { echo "FAIL: $sub $flag is missing from $completion"; exit 1; }
    done
    # Completing the subcommand's flags through the real completion function offers them too.
    COMP_WORDS=(dmlgrad "$sub" --)
    COMP_CWORD=2
    _dmlgrad
    [[ ${#COMPREPLY[@]} -gt 0 ]] || { echo "FAIL: nothing completed for $sub --"; exit 1; }
done
echo "completion covers: $(echo $subcommands)"
