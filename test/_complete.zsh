# Drives an interactive zsh on a pseudo-terminal (zsh/zpty) to see what a completion
# script offers, as a user pressing Tab would. Usage: zsh -f _complete.zsh SCRIPT QUERY…
# SCRIPT is sourced, or, when it is a directory, put on $fpath for compinit to autoload
# (the _kt file there). Prints one line per query: the query, a tab, the words offered.
zmodload zsh/zpty
zpty z zsh -f -i
if [[ -d $1 ]]; then
  zpty -w z "PS1=''; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
else
  zpty -w z "PS1=''; autoload -U compinit; compinit -u -D; source ${(q)1}"
fi
# Every word the completion system is given goes to the terminal marked <W>; the mark is
# typed in pieces so that the terminal's echo of what was typed never holds it.
zpty -w z 'compadd() { builtin compadd "$@"; local -a _w; builtin compadd -O _w "$@"; print -rl -- "<""W>"${^_w}; }'
zpty -w z 'zle -C kt-test complete-word _main_complete; bindkey "^I" kt-test'
# Wait until the shell has run all of the above before typing.
zpty -w z "print -- '<READ''Y>'"
zpty -r z out '*<READY>*'
shift
for query in "$@"; do
  zpty -w -n z "$query"$'\t'
  # Let the completion run before typing on: keys already waiting when it starts (typeahead,
  # likelier on a loaded machine or while _kt is first autoloaded) can make zsh drop it.
  # Up to 3 s for the first offered word, then 0.2 s more for the rest.
  out=''
  for i in {1..60}; do
    zpty -r -t z chunk && out+=$chunk
    [[ $out == *'<W>'* ]] && break
    sleep 0.05
  done
  if [[ $out == *'<W>'* ]]; then
    sleep 0.2
    while zpty -r -t z chunk; do out+=$chunk; done
  fi
  zpty -w z $'\C-e\C-u'"print -- '<E''ND>'"
  while zpty -r -t z chunk || sleep 0.05; do
    out+=$chunk
    [[ $out == *'<END>'* ]] && break
  done
  # A marked word may follow the echoed line on the same row: keep what follows the mark.
  found=(${(u)${${(M)${(f)"$(print -r -- $out | tr -d '\r')"}:#*<W>*}##*<W>}})
  print -r -- "$query"$'\t'"${(j: :)found}"
done
zpty -d z
