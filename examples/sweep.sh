#!/bin/sh
# Multiply the two parameters; a stand-in for a real simulation.
echo "alpha=$1 beta=$2 product=$(echo "$1 * $2" | bc 2>/dev/null || awk "BEGIN {print $1 * $2}")"
