#!/bin/sh
# Count the words of words.txt into counts.txt.
tr -s ' \t' '\n' < words.txt | sort | uniq -c | sort -rn > counts.txt
echo "counted $(wc -l < counts.txt) distinct words"
