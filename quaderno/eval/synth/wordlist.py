"""Real words a fictional name must not be.

The words of the BERT uncased vocabulary (as shipped with all-MiniLM-L6-v2, Apache-2.0) that
the syllable grammar of :mod:`.names` could produce: English words and the many real person
and place names that vocabulary holds. nltk's ``words`` corpus is not available offline, so
the list is shipped here (only the grammar-reachable part, to stay compact).
"""

from __future__ import annotations

WORDS: frozenset[str] = frozenset("""
baba babe babu baby babylon baden baker bakery baku bala balfour bali balkan balthazar banana
bananas band banda bandage bandages bane bangor banker banner barbados barbara barbarian barber
bare barely barge barges bari barker barn barnes baron barony barrage barre barrel barren
barrister barron barry bartender barton basal base basel baseman bases basil basin basis batavia
bates bath baton bavaria bavarian baxter bazaar bear before began begin begun bela belarus
belgarath belgian belgrade belinda belize bella bellamy belle belly bend bender bengal bengali
benin benito benny benson benton berber bergen berger berlin berman bermuda bern bernardo berry
bertha bertrand beside besides beta beth bethany bethel beverly bias bike biker bikes bikini
bile billy binary bind bingo bipolar bison bite bites bizarre boar bobo bodily bodo body bogota
bois bolivar bolivia bolivian bolton bond bone bones bonfire bono bonus bonuses bony border bore
boris born borne bose bosnia bosnian bosses boston botany both bother boulder bound boundary
bounty bourbon bourne bournemouth braden brady brake brakes bran brand brandon brandy brasil
brave bravery braves bravo brazil brazilian bremen brenda brendan brennan brethren breton brian
brianna bribe bribery bribes bride brigade brigades brisbane bristol britannia brody broke
broken broker bronze bros brothel brother bruno brutal brutally brute bryn bryson bulgaria
bulgarian bulge bulky bulletin bully bundle bundles bunker bunny burden buren burger burgundy
burial burke burkina burma burmese burn burton burundi bury buses buster busy byrne byron byte
bytes dade daemon dakota dale dali dallas dalton daly damage damages dame damian damon dana dane
danes danger dangerous dani danny dante danube darby dare darker darren darryl daryl data date
dates dave davis davy daze dear debate debates debra debris defend defender defense defenses
define defines delgado deliver della delle delta demand dementia demi demise demo demon demos
denial denis denise dennis denny denote denotes dense densely density dental dentistry denton
denver deny depend deputy derby derive derives derry deserve deserves desire desires desmond
despite destiny deter devi devil devin devon devote dexter diabetes diagonal dial diameter
diamond diana diane diary diaspora digital dillon dime dimitri dina dinamo diner dinner dino
dire dirty disaster disastrous dislike dismissal disorder dispersal disperse disposal dispose
dispute disputes dissolve distal diva dive diver diverse divide divides divine dollar dolly
dolores dome domes domingo domino dona donate done donegal donna donnelly donor donovan dora
dorian doris dorothy dorsal dose doses dove dover dozen dragon drake drama dramas draper dresden
dresser dresses drive driven driver drives drone drones drove drunken drury dryly duane dubois
dude duke dukes duluth duly dunbar dune dunedin dunes dunne duran durban durga dustin dusty duty
duval dyke dylan dynamo dynasty faber fabian fabulous fade fades fake fallen fallon false
falsely fame familiar family famine famous famously fanny fantasia fantasy fare fares fargo
farmer farther faso faster fatal fatally fate fates father fatima favor favour fear federal
federer felipe felix felony female females fender fenton feral ferdinand fergus ferguson fern
fernando ferrara ferrari ferrer ferris ferry fertile festival fetal fever fiba fiber fibre fide
fifa fife figure figures file files filly filter filthy final finale finally find fine finely
finer fines finger finite finland fire fires five fixture fixtures folder foliage folly fond
fontana forbade forbes fore foreman forestry forever forge forgive forgiven formal formally
former formerly formula formulas forster forsyth forte fortune fortunes forty fossil foster foul
found founder foundry four fuller fully fulton fund funeral fungal fungi fungus funky funnel
funny furry further fury fuse futile future futures gabe gabon gael gaga gage gala gale galen
gallantry gallery gallo gallon galveston game gamer games ganga garage garbage garde garden
gardener gardiner gareth garland garner garrison garry gary gases gaston gate gates gather gave
gavin gaza gaze gazes gear gemini gender gene genera general generous genes genesis geneva
genome genre genres gentry genus gerais german germany gerry gertrude gestapo gesture gestures
gibraltar giles gilles gillian gilmore gina ginger gingerly giro give given gives golden golfer
gone gonna gonzaga gonzales gora goran gordon gore gorge gorilla gorman gospel goth govern
governor grade grades grady graeme gran granada grand grande grandfather grandma grandmaster
grandmother grandpa grandson grange granite granny granville grape grapes grasses grassy
grateful grave gravel gravely graves gravity gregor gregorian gregory grenada grenade grenades
greta grille grimes grin grind groningen ground grove grover groves grupo gunfire gunmen gunnar
gunner gunnery gunter gunther guru gustave gustavo kabul kade kala kaladin kali kamal kamen kane
kannada kansas kara karate karel karen kari karin karma kassel kata kate kathmandu kathryn kathy
kato katrina katy kazan keane kellan keller kelly kelvin kendra kennedy kenneth kenny kenton
kerala kerman kern kernel kerry kevin kiara kilda kildare kilkenny killer kinase kind kinda
kindly kira kiran kirby kisses kite kobe kolkata konstantin kosovo kota kramer kris kristen
kristin kristina kruger kumar kurdistan kyle label labor labour labrador laden lady lagos laguna
lake lakes lama lamar lame lana land landon lane lanes lange lanka lankan lantern lara large
largely larger larkin larry larsen larson larvae laser late lately later lateral latin latino
lava laval lavender lazarus lazy lear lebanon legal legally legend leger lego leland lemon lena
lend lenin lennon lennox lenny lenses lesbian lesser lesson lester lethal leto level lever levi
levin levine levy liar libel liberal liberia liberty librarian library libre life lifespan liga
ligand like likely likes lila lilith lille lillian lilly lily lima lime limo lina linda linden
line linear lineman linen liner lines linger linux lisa lisbon lissa listen listener lister
liter literal litre litres liturgy live lively liver livery lives liza lobe lobes logan logo
logos lois loki lola london lone lonely longer lore loren lorenzo lori lose loser loses losses
lotus louder louis lounge love lovely lover loves luis lukas luke lullaby lulu luminous luna
lunar lund lure luther lutheran luton luzon lydia lyle lyman lyndon lynne mabel madame made
madison madonna madras maestro mafia mage maia make maker makes mala malabar malaga malaria
maldives male males mali malibu mallory malmo malone malta maltese malvern mama mana manage
manager manages mandal mandarin mandate mandates mandela mandir mandolin mandy mane manga mango
mangrove mani mania manila mankind manly manner manny manor manson mantra many mara marathi
marathon mare marge margin marginal mari maria marian mariana marianne mariano marilyn marin
marina marine marines marino maris marissa marital marker marko markus marlene marlon marne
marquis marriage marriages marry marta martha martial martian martin martina martini marty
martyr maru marvel marvelous marvin mary maryland mason masonry masovian massage masses massimo
massive master mastery mata mate mater material maternal mates math mathias matilda matrix
mature maze medal media medial median medina mega megan melbourne melinda melissa mellon melody
melville melvin memo memorial memory mendes mendoza menon mental mentally mentor menu mere
meredith merely merge merger meridian merlin merry merton mesa message messages messenger
messina messy meta metal meter methane methyl metis metre metres metro metropolis miami midi
migrate mika mike milan milano mile miles militia militias milky millennia miller milne milo
milos milton mimi mina minas mind mine miner mineral minerva mines mini minimal minister
ministry minor minus minute minutes mira mirage miranda mirror mirza misery misses missile
missiles missouri missy mistake mistaken mistakes mister misty mixtape mixture mobile mode model
modern modes modify modular module modules moldova mole molina molly molten mona monde mongol
mongolia mongolian moniker monitor monmouth mono monster montagu montana montane monte montrose
monty mora moral morale morales morally moran moravian more moreno morgan mori mormon morris
morrison morse mortal mortally mortar mortimer morton moses motel moth mother motive motives
motor mound mouse mouth mouthful move moves mule muller multi mundane mundo munro munster mural
murder murderer murderous murmur musa muse mustafa muster mute mutiny myles myra mysore mystery
myth nadia nadu naga nagar naia name namely names namibia nana nanny nano nantes nape napoli
nara narrator nasa nasal nasser nasty natal natalia nate nathan native natives nato natural
nature naval navarre navarro nave navy nazareth nazi nazis near nebraska nebula nedra negro
nelly nelson nemesis nepal nepali nero nerve nerves nervous nervously nestor nevada never
neville niagara nigel niger nigeria nigerian nike nikita nikola nile nina nine ninety nino
nintendo nirvana nissan nitrate nitrogen nobel nobody node nodes nokia nolan nominal none
nonlinear nonsense nope nora norma normal normally norman normandy norris norse norte northern
norton nose noses nostalgia note notes nothin notre noun nouvelle nova novel novella novelty
novi novo nude numerous nurse nursery nurses nylon padre padres pagan page pages pagoda pakistan
palais pale paler palermo pali palma palmer palo pamela panama panda pandora panel panther
pantry panzer papa papal paper papyrus para parade parades paradox parallel paralysis parana
paranoia pardon parental paris parisian parker parkinson parlor parma parody parole parry
partial partially partisan party paso passage passages passenger passes passive pasta paste
pastor pastoral pastry pasture pastures patel paternal paterson path pathogen patrol patron
pavel paxton pear pedal pedersen pedestal pedestrian pedro pegasus pena penal penalty pendleton
peninsular penis penny pentagon penthouse pere perennial performer perfume perrin perry persia
persian person persona personal personnel peru peruvian pete peter petersen peterson petite
petra petrol piano pianos pike pile piles pillar pine pines pinto pipe piper pipes pirate
pirates pisa pistol piston pity pivotal poke pokemon poker poland polar pole poles polgara
polite polka pollen polly polo poly polymer pomerania pond ponder pony pope popular populous
porn portage portal porte porter porto portugal pose poses posse possesses postage postal poster
posthumous posture potato potential poultry pound pounder pour poverty pulse pulses pune punta
pupil pure purely purge purity purpose purposes purse pussy putin python qaeda qatar quran radar
radial rafael rafe rage rake rally rama ramon ramos rana rand randy range ranger ranges rani
rankin rape rare rarely rate rates rather rave raven ravi ravine razor rear rebel reborn rebound
refer reformer refuge refusal refuse refuses regal regan regime regimes regina regis register
registrar registry regular relate relates relax rely remade remake remedy remind reminder remix
remorse remote removal remove removes remy renal render rene reno rental reporter reserve
reserves reside resides resin resolve respond response responses restore resume retire retro
return revenge reverend reversal reverse revival revive revolver revolves reza ride rider rides
riga rigorous ringo ripe rise risen rises risky rita rite rites rival rivalry river rivera roar
robe roberta roberto robes robin robinson robyn rode rodrigo roger roland role roles roller roma
roman romani romania romanian romano rome romero ronan ronin rope ropes rory rosa rosary rose
rosen rosenthal roses rossi roster rosy rotary rotate roth rotor rouge round rourke rouse route
routes routine routines rover ruben rubin ruby rude rudy rufus rule ruler rules rumor rune runes
runner rural ruse russia russian russo rusty ruth ryder saber sabine sabre sabres sabrina saetan
safari safe safely safer safety saga sage sake sakura salary salazar sale sales salesman saline
saliva salle sally salman salmon salon salsa salty salute salvador salvage samantha same sami
sand sandra sandstone sandy sane sanity santa santana santiago santo santos sara sardinia satan
satin satire satisfy sato saturn sava savage savanna save saves sebastian sedan sega segunda
selangor selena seller selma semester semi seminal seminar senate senator send senegal sense
senses sensor sensory sentinel sera serbia serbian serena serene serge serial sermon serra serve
server serves sesame seth seton seven seventy several severe severn sevilla seville siberia
siberian side sides sigismund silas silesia silesian silky silly silva silver silvery silvia
sima simi similar simon simone sinatra singer singular sinister sino sire siren sister site
sites situ sixty size sizes skate skater skeletal skeleton skin skinner skinny skyla skylar
skyline sober soda sofa sofia solar sole solely solo solomon solos solve somali somalia some
somethin sonar sonata sonia sonny sonora sony sorbonne sore sorry soto soul sound sour sous
sousa south southbound southend southern southland souza stade stage stages stake stakes stale
stalin stalker stan stand stanton stanza star stare stares starter state staten states statesman
stature status statute statutes stefan stefano stella stellar sterile stern steve steven
stevenson stil stimuli stimulus stir stoke stokes stole stolen stone stones stony storage store
stores stormy story stove study sturdy style styles styx suburban sudan sufi sugar sulfate
sulfur sullivan sultan sumatra sumo sunderland sunken sunni sunny sunrise super superman
superstar sure surely surfer surge surgery surname surrender surround survival survive survives
survivor susan susanna suspend suspense sussex sutherland sutra suzanne suzuki suzy sykes
sylvester sylvia syndrome syntax synthesis syria syrian tabitha take taken takes tale tales
taliban taller tally talon taluka tamara tame tamil tanaka tango tanker tanner tanzania tape
tapes tapestry tara tarzan tasmania tasmanian taste tastes tata tatar tate tatiana tavern tavi
taxis tear teeth teller telugu tend tender tenderly tennis tenor tense tensor tenure teresa
terminal terminus terra terre terrestrial terri terror terry tertiary tesla tessa testify
textile textiles texture textures thames than theme themes then therapy there thereby theresa
therese thermal these thesis theta thin thinner thirsty thirty this thomas thor thorn thorne
thornton thorpe those thou thousand thunder thus tian tibetan tidal tide tides tidy tiger tile
tiles time timely timer times timor timothy tina tiny tirana tire tires titan tito titular titus
tobago tobias tobin toby together togo token toledo tomas tomato tome tone tones tonga toni
tonnes tony tore tori torino torn tornado toro toronto torpedo torre torres torso torture tory
total totally toulon toulouse tour trade trader trades tragedy tran transylvania travel traveler
traveller traverse travis tremendous tremor trend trenton tres trevor trial triangular tribal
tribe tribes tribunal tribune tribute trilogy trinity tripoli tristan trivial trois troupe truly
truman truth tuba tube tubes tubular tudor tulane tully tulsa tumor tuna tune tunes tunis
tunisia tunisian tunnel turbine turbines turbo turin turn turner turnover turnpike tutor tyler
tyne type types tyre tyres tyrol tyrone tyson vale valentin valle valor valve valves vane
vanessa vanilla vanity vantage vapor vargas varsity vary vase vassal vega vegas vendor venetian
ventral ventura venture ventures venus vera verbal verde verdi verge verify verity vernon verona
versa verse verses versus vertebrae vertex vertigo verve very vessel veteran veto vial vibe vida
vidal vigor vigorous vila vile villa village villages villas ville vimes vine vinegar vines
vintage vinyl viper viral virgil virgin virginia virus viruses visa visas visitor vista vita
vital vitamin vito vitro viva vivian vivo vogel volga volta voltage volume volumes volvo vortex
vote voter votes vulgar vulture zane zebra zeke zenith zero zeta zone zones zulu
""".split())
